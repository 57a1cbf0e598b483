import { signFileLink, verifyFileLink } from './links';

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
