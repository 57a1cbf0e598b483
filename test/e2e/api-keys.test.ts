/**
 * API keys with an expiry, as an operator makes them with the admin CLI and a client
 * meets them over HTTP.
 */
import { createHash, randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { api, waitFor } from '../support/http';
import { admin, createUser, serviceEnv } from '../support/service';

const base = () => process.env.TEST_API_URL!;

describe('API keys with an expiry', () => {
  it('refuses a key past its expiry with 401 API_KEY_EXPIRED and lists when each key expires', async () => {
    const { userId, apiKey: lasting } = await createUser();
    const short = await admin(['keys', 'create', '--user', userId, '--expires-in', '2s']);
    expect(short.code).toBe(0);
    expect(short.json).toMatchObject({ userId, apiKey: expect.stringMatching(/^bas_/), expiresAt: expect.any(String) });
    const month = await admin(['keys', 'create', '--user', userId, '--expires-in=30d']);
    expect(Date.parse(month.json.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const refused = await waitFor(async () => {
      const r = await api(base(), 'GET', '/environments', { key: short.json.apiKey });
      return r.status === 401 ? r : null;
    }, 10_000, 250);
    expect(refused.body).toEqual({ success: false, code: 'API_KEY_EXPIRED', error: 'API key expired', message: 'API key expired' });
    // A key whose expiry lies ahead works like any other; the user's key without one too; a wrong key is still INVALID_API_KEY.
    expect((await api(base(), 'GET', '/environments', { key: month.json.apiKey })).status).toBe(200);
    expect((await api(base(), 'GET', '/environments', { key: lasting })).status).toBe(200);
    expect((await api(base(), 'GET', '/environments', { key: 'bas_not-a-key' })).body.code).toBe('INVALID_API_KEY');

    const listed = await admin(['keys', 'list', '--user', userId]);
    const byId = Object.fromEntries(listed.json.keys.map((k: any) => [k.keyId, k.expiresAt]));
    expect(byId[short.json.keyId]).toBe(short.json.expiresAt);
    expect(byId[month.json.keyId]).toBe(month.json.expiresAt);
    expect(Object.values(byId)).toContain(null);
  });

  it('refuses a malformed expiry in the CLI without making a key', async () => {
    const { userId } = await createUser();
    const bad = await admin(['keys', 'create', '--user', userId, '--expires-in', '30']);
    expect(bad.code).toBe(2);
    expect(bad.json.error).toMatch(/--expires-in must be a positive duration/);
    expect((await admin(['keys', 'list', '--user', userId])).json.keys).toHaveLength(1);
  });

  it('keys stored before the lookup by hash existed are taken over once, and revoking by id refuses them at once', async () => {
    const { userId, apiKey: own } = await createUser();
    const mongo = await MongoClient.connect(serviceEnv().MONGODB_URL);
    try {
      const db = mongo.db();
      // a key as stored before: only its record, no lookup entry
      const legacy = `bas_${randomBytes(32).toString('base64url')}`;
      const keyId = `key_legacy${Date.now()}`;
      const hash = createHash('sha256').update(legacy).digest('hex');
      await db.collection('apiKeys').insertOne({ _id: keyId as any, userId, hash, prefix: legacy.slice(0, 10), createdAt: new Date(), revokedAt: null, expiresAt: null });
      expect((await api(base(), 'GET', '/environments', { key: legacy })).status).toBe(401);
      // the next process that connects brings the store up to date (the admin CLI is one)
      await db.collection('migrations').deleteOne({ _id: 'apiKeyLookup' as any });
      expect((await admin(['keys', 'list', '--user', userId])).code).toBe(0);
      expect(await db.collection('apiKeyLookup').findOne({ _id: hash as any })).toMatchObject({ keyId, userId, revokedAt: null });
      expect(await db.collection('migrations').findOne({ _id: 'apiKeyLookup' as any })).toBeTruthy();
      expect((await api(base(), 'GET', '/environments', { key: legacy })).status).toBe(200);

      expect((await admin(['keys', 'revoke', '--key', keyId])).code).toBe(0);
      expect((await api(base(), 'GET', '/environments', { key: legacy })).body.code).toBe('INVALID_API_KEY');
      expect((await admin(['keys', 'revoke', '--key', keyId])).code).not.toBe(0);
      // the user's other key is untouched; the stored key keeps no key in clear
      expect((await api(base(), 'GET', '/environments', { key: own })).status).toBe(200);
      expect(JSON.stringify(await db.collection('apiKeyLookup').find({ userId }).toArray())).not.toContain(own);
    } finally {
      await mongo.close();
    }
  });
});
