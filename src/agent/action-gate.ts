/**
 * The gate every agent action passes between the model's choice and the browser:
 *   1. secrets: `<secret>name</secret>` in what the action types becomes the value, only on
 *      a page the entry's `match` covers (else the action fails and nothing is typed);
 *   2. policy: the action's facts (type, page, target URL, element text, what it types or
 *      submits) against the session's policy: allow, block or approve.
 * The tool itself runs only with `perform`.
 */
import { actionFacts } from './policy/action-facts';
import type { CompiledPolicy } from './policy/policy';
import { TaskSecrets } from './secrets/secrets';
import type { AgentTool, ToolContext } from './types';

export type GateOutcome =
  | { kind: 'perform'; args: unknown }
  | { kind: 'block'; reason: string }
  | { kind: 'approve'; reason: string; request: string };

const NO_SECRETS = new TaskSecrets([]);

/** The arguments that type or fill text: secrets are put into these only. */
const TYPED_ARGS: Record<string, string[]> = { input_text: ['text'], select_option: ['value', 'label'] };

export async function gateAction(q: {
  tool: AgentTool;
  args: unknown;
  ctx: ToolContext;
  policy: CompiledPolicy | null;
  secrets?: TaskSecrets;
  /** A human approved this action: `approve` rules let it pass (a `block` still stops it). */
  approved?: boolean;
}): Promise<GateOutcome> {
  const { tool, ctx, policy } = q;
  const args = { ...(q.args as Record<string, unknown>) };
  const typed: string[] = [];
  for (const key of TYPED_ARGS[tool.name] ?? []) {
    const value = args[key];
    if (typeof value !== 'string') continue;
    if (TaskSecrets.uses(value)) {
      const sub = (q.secrets ?? NO_SECRETS).substitute(value, ctx.page.url());
      if (!sub.ok) throw new Error(sub.error);
      args[key] = sub.text;
    }
    typed.push(args[key] as string);
  }
  if (!policy) return { kind: 'perform', args };
  const facts = await actionFacts(ctx, tool.name, args, typed, policy.needsPageFacts(tool.name));
  const decision = policy.evaluate(facts);
  if (decision.effect === 'block') return { kind: 'block', reason: decision.reason };
  if (decision.effect === 'approve' && !q.approved) {
    return { kind: 'approve', reason: decision.reason, request: describeRequest(tool.name, q.args as Record<string, unknown>, facts.texts, facts.pageUrl, decision.reason) };
  }
  return { kind: 'perform', args };
}

/** What the human is asked: the action as the model wrote it (placeholders, never values). */
function describeRequest(action: string, args: Record<string, unknown>, texts: string[], pageUrl: string, reason: string): string {
  const on = texts.find(Boolean);
  const what: Record<string, () => string> = {
    navigate: () => `open ${String(args.url)}`,
    click_element: () => `click ${on ? `"${on}"` : `element [${String(args.index)}]`}`,
    input_text: () => `type "${String(args.text)}" into ${on ? `"${on}"` : `element [${String(args.index)}]`}`,
    select_option: () => `choose "${String(args.value ?? args.label)}" in ${on ? `"${on}"` : `element [${String(args.index)}]`}`,
    send_keys: () => `press ${String(args.keys)}`,
    upload_file: () => `upload ${(args.fileIds as string[] | undefined)?.join(', ')} into element [${String(args.index)}]`,
  };
  const action_ = what[action]?.() ?? `${action} ${JSON.stringify(args)}`;
  return `The agent wants to ${action_} on ${pageUrl}; ${reason}. Answer "approve" to let it, anything else refuses it.`;
}

/** Whether a guardrail answer approves: yes, approve, approved, ok, allow, confirm (any case, with or without punctuation). */
export function approves(answer: string): boolean {
  return /^(y|yes|approve|approved|ok|okay|allow|allowed|confirm|confirmed|go ahead|proceed)[.!\s]*$/i.test(answer.trim());
}
