import { checkRecordPageToken, recordPage, recordPageToken, stepTarget } from './record-page';
import type { RecordedStep } from '../contracts/recording';

const step = (over: Partial<RecordedStep>): RecordedStep => ({ seq: 0, by: 'agent', action: 'click_element', args: {}, urlBefore: 'https://a.test/', urlAfter: 'https://a.test/', outcome: 'ok', at: '', ...over });

describe('record page', () => {
  it('signs a page for one session and one task, until it expires', () => {
    const until = Date.now() + 60_000;
    const token = recordPageToken('secret', 's1', 't1', until);
    expect(checkRecordPageToken('secret', 's1', 't1', token)).toBe(true);
    expect(checkRecordPageToken('secret', 's1', 't2', token)).toBe(false);
    expect(checkRecordPageToken('secret', 's2', 't1', token)).toBe(false);
    expect(checkRecordPageToken('other', 's1', 't1', token)).toBe(false);
    expect(checkRecordPageToken('secret', 's1', 't1', undefined)).toBe(false);
    expect(checkRecordPageToken('secret', 's1', 't1', [token])).toBe(false);
    // expired, or its expiry changed: refused
    expect(checkRecordPageToken('secret', 's1', 't1', token, until + 1_000)).toBe(false);
    const [exp, sig] = token.split('.');
    expect(checkRecordPageToken('secret', 's1', 't1', `${Number(exp) + 3600}.${sig}`)).toBe(false);
    // a token of the old form (no expiry) is refused
    expect(checkRecordPageToken('secret', 's1', 't1', sig)).toBe(false);
  });

  it('escapes everything that came from pages and models', () => {
    const evil = '<img src=x onerror=alert(1)>"\'&';
    const html = recordPage({
      sessionId: 's1',
      taskId: 't1',
      status: 'task_completed',
      steps: [step({ reasoning: evil, error: evil, urlAfter: `https://a.test/?q=${evil}`, element: { role: 'button', name: evil, tag: 'BUTTON', css: 'b', box: { x: 0, y: 0, width: 1, height: 1 } }, pictureFileId: 'file_1' })],
      pictureUrl: (seq) => `/recordings/s1/t1/pictures/${seq}?token=a"b`,
    });
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;&#34;&#39;&#38;');
    expect(html).toContain('src="/recordings/s1/t1/pictures/0?token=a&#34;b"');
    expect((html.match(/<img /g) ?? []).length).toBe(1);
  });

  it('names what a step acted on', () => {
    expect(stepTarget(step({ element: { role: 'link', name: '', text: 'Help', tag: 'A', css: 'a', box: { x: 0, y: 0, width: 1, height: 1 } } }))).toBe('link "Help"');
    expect(stepTarget(step({ action: 'navigate', args: { url: 'https://b.test/' } }))).toBe('https://b.test/');
    expect(stepTarget(step({ action: 'send_keys', args: { keys: 'Enter' } }))).toBe('Enter');
  });
});
