import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LINK_SECRET_FILE, linkSecret } from './links';
import { signFileLink, verifyFileLink } from '../contracts/link-tokens';

describe('signed file links', () => {
  it('accept their own file until they expire, and nothing else', () => {
    const token = signFileLink('s3cret', 'file_1', 2_000);
    expect(verifyFileLink('s3cret', 'file_1', token, 1_000)).toBe(true);
    expect(verifyFileLink('s3cret', 'file_1', token, 2_001)).toBe(false);
    expect(verifyFileLink('s3cret', 'file_2', token, 1_000)).toBe(false);
    expect(verifyFileLink('other', 'file_1', token, 1_000)).toBe(false);
    expect(verifyFileLink('s3cret', 'file_1', token.replace(/^\d+/, '9999999'), 1_000)).toBe(false);
    expect(verifyFileLink('s3cret', 'file_1', 'garbage', 1_000)).toBe(false);
  });
});

describe('the link secret', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'links-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('is generated once in DATA_DIR with mode 0600, random, and read back by the next process', async () => {
    const dir = tmp();
    const secret = linkSecret({ DATA_DIR: dir, VIEW_TOKEN_SECRET: undefined });
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const file = path.join(dir, LINK_SECRET_FILE);
    expect(fs.readFileSync(file, 'utf8')).toBe(secret);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // another DATA_DIR: another secret (not derived from anything shared)
    expect(linkSecret({ DATA_DIR: tmp(), VIEW_TOKEN_SECRET: undefined })).not.toBe(secret);
    // a second process (a fresh module) reads the same file
    jest.resetModules();
    const fresh = await import('./links');
    expect(fresh.linkSecret).not.toBe(linkSecret);
    expect(fresh.linkSecret({ DATA_DIR: dir, VIEW_TOKEN_SECRET: undefined })).toBe(secret);
  });

  it('is VIEW_TOKEN_SECRET when set, and never contains the DATA_DIR path', () => {
    const dir = tmp();
    expect(linkSecret({ DATA_DIR: dir, VIEW_TOKEN_SECRET: 'configured-secret-0123456789' })).toBe('configured-secret-0123456789');
    expect(fs.existsSync(path.join(dir, LINK_SECRET_FILE))).toBe(false);
    expect(linkSecret({ DATA_DIR: dir, VIEW_TOKEN_SECRET: undefined })).not.toContain(dir);
  });
});
