/**
 * What the policy needs to know of an action before it runs: its page, what it types, and
 * what its tool says of it (policyFacts), read from the page with the helpers here: the
 * element's text, the address a link leads to, and the values a form would submit.
 */
import { resolveElement } from '../observe/resolve';
import type { AgentTool, FactsRequest, ToolContext } from '../types';
import { abortable } from '../tools/abort';
import type { ActionFacts } from './policy';

export interface ElementFacts {
  text: string;
  href: string | null;
  /** Values a click on this element would submit (it submits a form), else empty. */
  submits: string[];
}

const MAX_TEXT = 500;
const MAX_VALUES = 50;
const MAX_VALUE = 2000;

/** Runs in the page: self-contained. */
function describeForPolicy(el: Element, limits: { text: number; values: number; value: number }): ElementFacts {
  const html = el as HTMLElement & { value?: unknown; form?: HTMLFormElement | null; labels?: NodeListOf<HTMLLabelElement> | null; type?: string };
  const parts = [
    el.getAttribute('aria-label'),
    html.innerText,
    typeof html.value === 'string' && (el.tagName === 'BUTTON' || ['submit', 'button', 'reset'].includes(String(html.type))) ? html.value : null,
    el.getAttribute('title'),
    el.getAttribute('alt'),
    el.getAttribute('placeholder'),
    ...Array.from(html.labels ?? []).map((label) => label.innerText),
  ];
  const text = parts
    .filter((part): part is string => !!part && !!part.trim())
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, limits.text);
  const link = el.closest('a[href]') as HTMLAnchorElement | null;
  const type = String(html.type ?? '').toLowerCase();
  const submitter = (el.tagName === 'BUTTON' && (type === '' || type === 'submit')) || (el.tagName === 'INPUT' && (type === 'submit' || type === 'image'));
  const form = html.form ?? el.closest('form');
  const submits: string[] = [];
  if (submitter && form) {
    for (const field of Array.from(form.elements)) {
      const input = field as HTMLInputElement;
      if (typeof input.value !== 'string' || !input.value) continue;
      if (['hidden', 'submit', 'button', 'reset', 'checkbox', 'radio', 'file', 'image'].includes(String(input.type).toLowerCase())) continue;
      submits.push(input.value.slice(0, limits.value));
      if (submits.length >= limits.values) break;
    }
  }
  return { text, href: link ? link.href : null, submits };
}

/** Runs in the page: the values the focused field's form would submit on Enter. */
function focusedFormValues(limits: { values: number; value: number }): string[] {
  const el = document.activeElement as HTMLInputElement | null;
  const form = el?.form ?? el?.closest?.('form');
  if (!form) return [];
  const out: string[] = [];
  for (const field of Array.from(form.elements)) {
    const input = field as HTMLInputElement;
    if (typeof input.value === 'string' && input.value && !['hidden', 'submit', 'button', 'reset', 'checkbox', 'radio', 'file', 'image'].includes(String(input.type).toLowerCase())) out.push(input.value.slice(0, limits.value));
    if (out.length >= limits.values) break;
  }
  return out;
}

/** An address as it would be sent, and decoded (so 4111%201111... reads as the digits it carries). */
export function sentIn(url: string): string[] {
  const out = [url];
  try {
    const decoded = decodeURIComponent(url.replace(/\+/g, ' '));
    if (decoded !== url) out.push(decoded);
  } catch {
    /* a malformed escape: the address as it is */
  }
  return out;
}

/** The address when it is an http(s) one (the domain rules judge only those). */
export const httpAddress = (url: string | null | undefined): string | undefined => (url && /^https?:/i.test(url) ? url : undefined);

/** What the element the action names by its index is, read from the page when asked (else, or without an index, undefined). */
export async function elementFacts({ ctx, args, fromPage }: FactsRequest<{ index?: number }>): Promise<ElementFacts | undefined> {
  if (!fromPage || typeof args.index !== 'number') return undefined;
  const locator = ctx.pinned?.locator ?? (await resolveElement(ctx.page, args.index));
  return abortable(locator.evaluate(describeForPolicy, { text: MAX_TEXT, values: MAX_VALUES, value: MAX_VALUE }, { timeout: 2_000 }), ctx.signal);
}

/** The element's text as the facts' texts (none when it has no text or was not read). */
export async function elementText(request: FactsRequest<{ index?: number }>): Promise<string[]> {
  const el = await elementFacts(request);
  return el?.text ? [el.text] : [];
}

/** The values the focused field's form would submit on Enter (none when they cannot be read). */
export async function focusedFormSubmits(ctx: ToolContext): Promise<string[]> {
  return abortable(ctx.page.evaluate(focusedFormValues, { values: MAX_VALUES, value: MAX_VALUE }), ctx.signal).catch(() => [] as string[]);
}

/**
 * The facts of one action. `typed` is what it would type (secrets in place). `fromPage`:
 * read the element and form from the page (only when the policy has rules that need them).
 */
export async function actionFacts(ctx: ToolContext, tool: AgentTool, args: Record<string, unknown>, typed: string[], fromPage: boolean): Promise<ActionFacts> {
  const pageUrl = ctx.page.url();
  const part = await tool.policyFacts({ ctx, args, typed, fromPage });
  const facts: ActionFacts = { action: tool.name, pageUrl, texts: part.texts ?? [], data: [...typed, ...(part.data ?? [])] };
  if ('targetUrl' in part) facts.targetUrl = part.targetUrl;
  return facts;
}
