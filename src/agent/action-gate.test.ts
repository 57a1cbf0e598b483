import { approves, gateAction } from './action-gate';
import { CompiledPolicy } from './policy/policy';
import { TaskSecrets } from './secrets/secrets';
import { agentTools } from './tools';
import type { ToolContext } from './types';

const tool = (name: string) => agentTools.find((t) => t.name === name)!;
const ctxAt = (url: string) => ({ page: { url: () => url }, signal: new AbortController().signal }) as unknown as ToolContext;
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

  it('takes yes, approve, ok and the like as approval, anything else as refusal', () => {
    for (const yes of ['approve', 'Approved.', 'yes', 'Y', 'ok!', 'go ahead', 'Confirm']) expect(approves(yes)).toBe(true);
    for (const no of ['no', 'approve it later', 'not ok', '', 'deny', 'yes but no']) expect(approves(no)).toBe(false);
  });
});
