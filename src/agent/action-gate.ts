/**
 * The gate every agent action passes between the model's choice and the browser:
 *   1. secrets: `<secret>name</secret>` in what the action types becomes the value, only into
 *      an element whose own frame the entry's `match` covers, and only when every frame
 *      between it and the top is the same site or covered by the entry too (else the action
 *      fails and nothing is typed); the field then shows the placeholder in observations;
 *   2. policy: the frame the action acts on (and every frame above it) against the domain
 *      rules, then the action's facts (type, page, target URL, element text, what it types,
 *      presses, opens or submits) against the session's policy: allow, block or approve.
 * The tool itself runs only with `perform`.
 */
import type { Frame, Locator } from 'playwright-core';
import { STATE_KEY } from '../browser/page-elements';
import { resolveElementIn } from './observe/resolve';
import { actionFacts } from './policy/action-facts';
import type { CompiledPolicy } from './policy/policy';
import { TaskSecrets, placeholder } from './secrets/secrets';
import { abortable } from './tools/abort';
import type { AgentTool, ToolContext } from './types';

export type GateOutcome =
  | { kind: 'perform'; args: unknown }
  | { kind: 'block'; reason: string }
  | { kind: 'approve'; reason: string; request: string };

const NO_SECRETS = new TaskSecrets([]);

/** The arguments that type or fill text: secrets are put into these only. */
const TYPED_ARGS: Record<string, string[]> = { input_text: ['text'], select_option: ['value', 'label'] };
/** Actions on an element by its index: the element's frame is checked. */
const ELEMENT_ACTIONS = new Set(['click_element', 'input_text', 'select_option', 'upload_file']);
/** Actions that act on the page as it is (not one that leaves it): its frame must be allowed. */
const PAGE_ACTIONS = new Set(['send_keys', 'scroll', 'extract']);

/** The element an action names, its frame, and the addresses of that frame and each frame above it (innermost first). */
interface ElementPlace {
  locator: Locator;
  frame: Frame;
  /** http(s) address of each frame from the element's up to the top; a frame without one (about:blank, srcdoc) takes its parent's. */
  chain: string[];
}

async function placeOf(ctx: ToolContext, index: unknown): Promise<ElementPlace> {
  const { locator, frame } = ctx.pinned ?? (await abortable(resolveElementIn(ctx.page, Number(index)), ctx.signal));
  const raw: string[] = [];
  for (let f: Frame | null = frame; f; f = f.parentFrame()) raw.push(f.url());
  // A frame without an address of its own (about:blank, srcdoc) has its creator's origin: its parent's.
  const chain = raw.map((url, index) => (/^https?:/i.test(url) ? url : (raw.slice(index + 1).find((outer) => /^https?:/i.test(outer)) ?? url)));
  return { locator, frame, chain };
}

/** Marks a field a secret was typed into: observations show the placeholder as its value from now on. */
async function markSecretField(place: ElementPlace, names: string[], signal: AbortSignal): Promise<void> {
  const shown = names.map(placeholder).join('');
  await abortable(
    place.locator.evaluate(
      (element, marked) => {
        const state = (window as unknown as Record<string, { secrets?: WeakSet<Element>; placeholders?: WeakMap<Element, string> } | undefined>)[marked.key];
        if (!state) return;
        state.secrets?.add(element);
        (state.placeholders ??= new WeakMap()).set(element, marked.shown);
      },
      { key: STATE_KEY, shown },
      { timeout: 2_000 },
    ),
    signal,
  ).catch(() => undefined);
}

export async function gateAction(request: {
  tool: AgentTool;
  args: unknown;
  ctx: ToolContext;
  policy: CompiledPolicy | null;
  secrets?: TaskSecrets;
  /** A human approved this action: `approve` rules let it pass (a `block` still stops it). */
  approved?: boolean;
}): Promise<GateOutcome> {
  const { tool, ctx, policy } = request;
  const args = { ...(request.args as Record<string, unknown>) };
  const typed: string[] = [];
  const usesSecrets = (TYPED_ARGS[tool.name] ?? []).some((key) => typeof args[key] === 'string' && TaskSecrets.uses(args[key] as string));
  // A placeholder anywhere else (keys pressed, files, an address) is never turned into a value.
  if (!TYPED_ARGS[tool.name] && tool.name !== 'navigate' && tool.name !== 'done' && TaskSecrets.uses(JSON.stringify(request.args ?? {}))) {
    throw new Error(`Secrets can only be typed with input_text (or chosen with select_option) into a field; ${tool.name} does not put them in. Nothing was typed.`);
  }
  const restricts = !!policy?.restrictsDomains;
  let place: ElementPlace | undefined;
  if (ELEMENT_ACTIONS.has(tool.name) && (usesSecrets || restricts)) place = await placeOf(ctx, args.index);
  if (restricts) {
    const blocked = frameBlock(policy!, place?.chain ?? (PAGE_ACTIONS.has(tool.name) ? [ctx.page.url()] : []));
    if (blocked) return { kind: 'block', reason: blocked };
  }
  const used: string[] = [];
  for (const key of TYPED_ARGS[tool.name] ?? []) {
    const value = args[key];
    if (typeof value !== 'string') continue;
    if (TaskSecrets.uses(value)) {
      const [frameUrl, ...above] = place!.chain;
      const sub = (request.secrets ?? NO_SECRETS).substitute(value, frameUrl, above);
      if (!sub.ok) throw new Error(sub.error);
      args[key] = sub.text;
      used.push(...sub.used);
    }
    typed.push(args[key] as string);
  }
  const perform = async (): Promise<GateOutcome> => {
    if (place && used.length) await markSecretField(place, used, ctx.signal);
    return { kind: 'perform', args };
  };
  if (!policy) return perform();
  const facts = await actionFacts(ctx, tool, args, typed, policy.needsPageFacts(tool.name));
  const decision = policy.evaluate(facts);
  if (decision.effect === 'block') return { kind: 'block', reason: decision.reason };
  if (decision.effect === 'approve' && !request.approved) {
    return { kind: 'approve', reason: decision.reason, request: describeRequest(tool.name, request.args as Record<string, unknown>, facts.texts, facts.pageUrl, decision.reason) };
  }
  return perform();
}

/** Why the domain rules refuse acting in this frame (the innermost not allowed of the chain), or null. */
function frameBlock(policy: CompiledPolicy, chain: string[]): string | null {
  for (const url of chain) {
    const decision = policy.checkUrl(url);
    if (decision.effect !== 'block') continue;
    return chain.length === 1 ? `this page is not allowed: ${decision.reason}` : `the element is in a frame that is not allowed: ${decision.reason}`;
  }
  return null;
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
  const wanted = what[action]?.() ?? `${action} ${JSON.stringify(args)}`;
  return `The agent wants to ${wanted} on ${pageUrl}; ${reason}. Answer "approve" to let it, anything else refuses it.`;
}

/** Whether a guardrail answer approves: yes, approve, approved, ok, allow, confirm (any case, with or without punctuation). */
export function approves(answer: string): boolean {
  return /^(y|yes|approve|approved|ok|okay|allow|allowed|confirm|confirmed|go ahead|proceed)[.!\s]*$/i.test(answer.trim());
}
