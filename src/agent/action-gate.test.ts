import { approves, gateAction } from './action-gate';
import { CompiledPolicy } from './policy/policy';
import { TaskSecrets } from './secrets/secrets';
import { agentTools } from './tools';
import type { ToolContext } from './types';

const tool = (name: string) => agentTools.find((t) => t.name === name)!;
/** A frame at `url` inside `parent`, holding every indexed element. */
const frameAt = (url: string, parent: unknown = null): unknown => ({
  url: () => url,
  parentFrame: () => parent,
  isDetached: () => false,
  locator: () => ({ count: async () => 1, first: () => ({ evaluate: async () => ({ text: '', href: null, submits: [] }) }) }),
});
/** A page at `url` whose elements are all in `frame` (by default the page's own). */
const ctxAt = (url: string, frame: unknown = frameAt(url)) => ({ page: { url: () => url, frames: () => [frame] }, signal: new AbortController().signal }) as unknown as ToolContext;
const secrets = new TaskSecrets([{ match: '*.example.com', fields: { password: 'hunter2!' } }]);

describe('the action gate', () => {
  it('puts secrets into typed text on a matching page, and fails the action elsewhere', async () => {
    await expect(gateAction({ tool: tool('input_text'), args: { index: 2, text: '<secret>password</secret>', clear: true }, ctx: ctxAt('https://app.example.com/login'), policy: null, secrets })).resolves.toEqual({
      kind: 'perform',
      args: { index: 2, text: 'hunter2!', clear: true },
    });
    await expect(gateAction({ tool: tool('input_text'), args: { index: 2, text: '<secret>password</secret>' }, ctx: ctxAt('https://evil.test/'), policy: null, secrets })).rejects.toThrow(
      'The secret "password" may only be used on *.example.com, and this page is evil.test. Nothing was typed.',
    );
    // a placeholder in a task without secrets is not typed as such
    await expect(gateAction({ tool: tool('input_text'), args: { index: 2, text: '<secret>password</secret>' }, ctx: ctxAt('https://app.example.com/'), policy: null })).rejects.toThrow('There is no secret named "password"');
    // navigate never takes secrets
    await expect(gateAction({ tool: tool('navigate'), args: { url: 'https://x.example.com/?p=<secret>password</secret>' }, ctx: ctxAt('https://app.example.com/'), policy: null, secrets })).resolves.toMatchObject({
      args: { url: 'https://x.example.com/?p=<secret>password</secret>' },
    });
  });

  it('asks the policy with what would be typed, secrets in place, and words the approval with placeholders', async () => {
    const careful = new CompiledPolicy({ _id: 'pol_1', name: 'Careful', domainRules: { mode: 'allow_all', domains: [] }, rules: [{ effect: 'approve', actionTypes: ['input_text'], urlPatterns: ['*/login'] }] });
    const asked = await gateAction({ tool: tool('input_text'), args: { index: 2, text: '<secret>password</secret>' }, ctx: ctxAt('https://app.example.com/login'), policy: careful, secrets });
    expect(asked.kind).toBe('approve');
    expect(asked.kind === 'approve' && asked.request).toBe(
      'The agent wants to type "<secret>password</secret>" into element [2] on https://app.example.com/login; rule 1 of the policy "Careful" (approve) applies: the action is input_text, the URL matches "*/login". Answer "approve" to let it, anything else refuses it.',
    );
    const approved = await gateAction({ tool: tool('input_text'), args: { index: 2, text: '<secret>password</secret>' }, ctx: ctxAt('https://app.example.com/login'), policy: new CompiledPolicy({ _id: 'p', name: 'Careful', domainRules: { mode: 'allow_all', domains: [] }, rules: [{ effect: 'approve', actionTypes: ['input_text'] }] }), secrets, approved: true });
    expect(approved).toEqual({ kind: 'perform', args: { index: 2, text: 'hunter2!' } });
    await expect(gateAction({ tool: tool('navigate'), args: { url: 'https://evil.test/x' }, ctx: ctxAt('https://app.example.com/'), policy: new CompiledPolicy({ _id: 'p', name: 'Careful', domainRules: { mode: 'blocklist', domains: ['evil.test'] }, rules: [] }) })).resolves.toEqual({
      kind: 'block',
      reason: 'evil.test is blocked by the policy "Careful" (evil.test)',
    });
    await expect(gateAction({ tool: tool('navigate'), args: { url: 'app.example.com/admin' }, ctx: ctxAt('https://app.example.com/'), policy: new CompiledPolicy({ _id: 'p', name: 'Careful', domainRules: { mode: 'allow_all', domains: [] }, rules: [{ effect: 'block', actionTypes: ['navigate'], urlPatterns: ['*/admin*'] }] }) })).resolves.toMatchObject({ kind: 'block' });
  });

  it("types a secret only into a frame the entry covers, inside frames of the same site or named by the entry", async () => {
    const input = (ctx: ToolContext, s = secrets) => gateAction({ tool: tool('input_text'), args: { index: 3, text: '<secret>password</secret>' }, ctx, policy: null, secrets: s });
    // the top page matches, the field is in another site's frame
    await expect(input(ctxAt('https://app.example.com/', frameAt('https://evil.test/form', frameAt('https://app.example.com/'))))).rejects.toThrow(
      'The secret "password" may only be used on *.example.com, and this field is on evil.test (a frame inside app.example.com). Nothing was typed.',
    );
    // the field's frame matches, but it is embedded by another site
    await expect(input(ctxAt('https://evil.test/', frameAt('https://login.example.com/', frameAt('https://evil.test/'))))).rejects.toThrow(
      'The secret "password" may only be used on *.example.com: this field is on login.example.com, but in a frame embedded by evil.test, another site the secret does not name. Nothing was typed.',
    );
    // same site above, or an entry that names the embedding site too: typed
    await expect(input(ctxAt('https://www.example.com/', frameAt('https://login.example.com/', frameAt('https://www.example.com/'))))).resolves.toMatchObject({ kind: 'perform', args: { text: 'hunter2!' } });
    const both = new TaskSecrets([{ match: 'login.example.com', fields: { password: 'hunter2!' } }, { match: 'portal.test', fields: { password: 'other' } }]);
    await expect(input(ctxAt('https://portal.test/', frameAt('https://login.example.com/', frameAt('https://portal.test/'))), both)).rejects.toThrow('embedded by portal.test');
    const named = new TaskSecrets([{ match: '*.example.com', fields: { password: 'hunter2!' } }, { match: 'all', fields: { other: 'x' } }]);
    await expect(input(ctxAt('https://a.example.com/', frameAt('https://b.example.com/', frameAt('https://a.example.com/'))), named)).resolves.toMatchObject({ kind: 'perform' });
    // an about:blank frame has its parent's origin
    await expect(input(ctxAt('https://evil.test/', frameAt('about:blank', frameAt('https://evil.test/'))))).rejects.toThrow('this field is on evil.test');
    // key presses and files never carry a secret
    await expect(gateAction({ tool: tool('send_keys'), args: { keys: '<secret>password</secret>' }, ctx: ctxAt('https://app.example.com/'), policy: null, secrets })).rejects.toThrow('Secrets can only be typed with input_text');
  });

  it('blocks acting in a frame or on a page the domain rules do not allow', async () => {
    const only = new CompiledPolicy({ _id: 'p', name: 'Only us', domainRules: { mode: 'allowlist', domains: ['*.example.com'] }, rules: [] });
    await expect(gateAction({ tool: tool('input_text'), args: { index: 3, text: 'hello' }, ctx: ctxAt('https://app.example.com/', frameAt('https://evil.test/f', frameAt('https://app.example.com/'))), policy: only })).resolves.toEqual({
      kind: 'block',
      reason: 'the element is in a frame that is not allowed: evil.test is not among the domains the policy "Only us" allows (*.example.com)',
    });
    await expect(gateAction({ tool: tool('send_keys'), args: { keys: 'Enter' }, ctx: ctxAt('https://evil.test/'), policy: only })).resolves.toMatchObject({ kind: 'block', reason: expect.stringContaining('this page is not allowed: evil.test') });
    await expect(gateAction({ tool: tool('click_element'), args: { index: 3 }, ctx: ctxAt('https://app.example.com/'), policy: only })).resolves.toMatchObject({ kind: 'perform' });
    // leaving a page that is not allowed stays possible
    await expect(gateAction({ tool: tool('navigate'), args: { url: 'https://app.example.com/' }, ctx: ctxAt('https://evil.test/'), policy: only })).resolves.toMatchObject({ kind: 'perform' });
  });

  it('takes yes, approve, ok and the like as approval, anything else as refusal', () => {
    for (const yes of ['approve', 'Approved.', 'yes', 'Y', 'ok!', 'go ahead', 'Confirm']) expect(approves(yes)).toBe(true);
    for (const no of ['no', 'approve it later', 'not ok', '', 'deny', 'yes but no']) expect(approves(no)).toBe(false);
  });
});
