import { createHmac } from 'node:crypto';
import { verifiesWith } from '../../test/support/standard-webhooks';
import { deliveryHeaders, newWebhookSecret, sign, signatureHeader } from './webhook-signing';

/** The Standard Webhooks scheme computed independently of the module under test. */
function expected(secret: string, id: string, ts: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${ts}.${body}`, 'utf8').digest('base64');
}

describe('Standard Webhooks signing', () => {
  // The example of the Standard Webhooks specification (and its reference libraries' tests).
  it('matches the specification example', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const ts = 1614265330;
    const body = '{"test": 2432232314}';
    expect(sign(secret, id, ts, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs id.timestamp.body with the base64-decoded secret', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ sessionId: 's', taskId: 't', type: 'task_completed', data: { message: 'é ✓' } });
    expect(sign(secret, 'dlv_task_1', 1764000000, body)).toBe(expected(secret, 'dlv_task_1', 1764000000, body));
  });

  it('sends one signature per secret, space-separated (current first)', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const header = signatureHeader([current, previous], 'dlv_1', 42, '{}');
    expect(header.split(' ')).toEqual([expected(current, 'dlv_1', 42, '{}'), expected(previous, 'dlv_1', 42, '{}')]);
  });

  it('builds the headers of an attempt', () => {
    const secret = newWebhookSecret();
    const now = Date.parse('2026-11-23T10:00:00.900Z');
    const headers = deliveryHeaders({ deliveryId: 'dlv_x', body: '{"a":1}', secrets: [secret], auth: 'Bearer abc', now });
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'dlv_x',
      'x-delivery-id': 'dlv_x',
      'webhook-timestamp': String(Math.floor(now / 1000)),
      authorization: 'Bearer abc',
    });
    expect(headers['webhook-signature']).toBe(expected(secret, 'dlv_x', Math.floor(now / 1000), '{"a":1}'));
    expect(deliveryHeaders({ deliveryId: 'd', body: '', secrets: [secret] }).authorization).toBeUndefined();
  });

  it('verifies with the reference library as a receiver would: either signature, not a changed body', () => {
    const [current, previous, other] = [newWebhookSecret(), newWebhookSecret(), newWebhookSecret()];
    const headers = deliveryHeaders({ deliveryId: 'dlv_r', body: 'body', secrets: [current, previous] });
    expect(verifiesWith(current, 'body', headers)).toBe(true);
    expect(verifiesWith(previous, 'body', headers)).toBe(true);
    expect(verifiesWith(other, 'body', headers)).toBe(false);
    expect(verifiesWith(current, 'body2', headers)).toBe(false);
    // an old timestamp is refused (replay protection)
    const old = deliveryHeaders({ deliveryId: 'dlv_r', body: 'body', secrets: [current], now: Date.now() - 10 * 60_000 });
    expect(verifiesWith(current, 'body', old)).toBe(false);
  });
});
