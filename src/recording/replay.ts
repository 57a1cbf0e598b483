import type { Frame, Locator, Page } from 'playwright-core';
import type { TaskParams } from '../contracts/session-types';
import { REPLAYABLE_ACTIONS } from '../contracts/actions';
import { ARIA_ROLES, type ElementDescription, type RecordedStep } from '../contracts/recording';

/** How an element was found again, from the most to the least telling. */
export type MatchStrategy = 'testId' | 'id' | 'role' | 'label' | 'fieldName' | 'placeholder' | 'text' | 'css' | 'position';

export interface FoundElement {
  locator: Locator;
  frame: Frame;
  strategy: MatchStrategy;
}

/** The frame the element was in: by name, else by address (origin and path); the main frame when it had none. */
export function frameFor(page: Page, desc: ElementDescription): Frame | undefined {
  if (!desc.frame) return page.mainFrame();
  const frames = page.frames().filter((f) => f.parentFrame() && !f.isDetached());
  if (desc.frame.name) {
    const named = frames.find((f) => f.name() === desc.frame!.name);
    if (named) return named;
  }
  return frames.find((f) => samePage(f.url(), desc.frame!.url));
}


const quote = (s: string) => JSON.stringify(s);

/**
 * Finds a recorded element on the page as it is now. Each way is tried in turn and must
 * name exactly one element of the same kind (tag, input type): a test id, a stable id, role
 * and name, label, field name, placeholder, visible text. The CSS path and the position,
 * which any element in that place would satisfy, count only when the element there also
 * still carries one of the recorded texts. Null when none finds it: the page changed too much.
 */
export async function findAgain(page: Page, desc: ElementDescription): Promise<FoundElement | null> {
  const frame = frameFor(page, desc);
  if (!frame) return null;
  const tries: { strategy: MatchStrategy; locator: () => Locator; needsText?: boolean }[] = [];
  if (desc.testId) tries.push({ strategy: 'testId', locator: () => frame.locator(`[data-testid=${quote(desc.testId!)}], [data-test=${quote(desc.testId!)}], [data-qa=${quote(desc.testId!)}]`) });
  if (desc.id) tries.push({ strategy: 'id', locator: () => frame.locator(`[id=${quote(desc.id!)}]`) });
  if (desc.name && ARIA_ROLES.has(desc.role)) tries.push({ strategy: 'role', locator: () => frame.getByRole(desc.role as Parameters<Frame['getByRole']>[0], { name: desc.name, exact: true }) });
  if (desc.label) tries.push({ strategy: 'label', locator: () => frame.getByLabel(desc.label!, { exact: true }) });
  if (desc.fieldName) tries.push({ strategy: 'fieldName', locator: () => frame.locator(`[name=${quote(desc.fieldName!)}]`) });
  if (desc.placeholder) tries.push({ strategy: 'placeholder', locator: () => frame.getByPlaceholder(desc.placeholder!, { exact: true }) });
  if (desc.text) tries.push({ strategy: 'text', locator: () => frame.getByText(desc.text!, { exact: true }) });
  if (desc.css) tries.push({ strategy: 'css', locator: () => frame.locator(desc.css), needsText: true });
  for (const t of tries) {
    const found = await unique(t.locator(), desc, t.needsText ?? false);
    if (found) return { locator: found, frame, strategy: t.strategy };
  }
  const atPoint = await elementAt(frame, desc);
  return atPoint ? { locator: atPoint, frame, strategy: 'position' } : null;
}

/** The one visible element the locator names, when it is of the recorded kind. */
async function unique(locator: Locator, desc: ElementDescription, needsText: boolean): Promise<Locator | null> {
  try {
    if ((await locator.count()) !== 1) return null;
    const ok = await locator.evaluate(sameKind, { tag: desc.tag, inputType: desc.inputType ?? '', texts: needsText ? textsOf(desc) : null }, { timeout: 1_000 });
    return ok ? locator : null;
  } catch {
    return null;
  }
}

/** The element at the recorded position (its centre), when it is of the recorded kind and still says one of its texts. */
async function elementAt(frame: Frame, desc: ElementDescription): Promise<Locator | null> {
  if (desc.frame || desc.box.width <= 0 || desc.box.height <= 0) return null;
  const x = desc.box.x + desc.box.width / 2;
  const y = desc.box.y + desc.box.height / 2;
  const MARK = 'data-replay-target';
  try {
    const marked = await frame.evaluate(
      ([px, py, mark, want]) => {
        document.querySelectorAll(`[${mark}]`).forEach((e) => e.removeAttribute(mark));
        let el = document.elementFromPoint(px, py);
        while (el && el.tagName !== want.tag) el = el.parentElement;
        if (!el) return false;
        el.setAttribute(mark, '1');
        return true;
      },
      [x, y, MARK, { tag: desc.tag }] as const,
    );
    if (!marked) return null;
    return unique(frame.locator(`[${MARK}]`), desc, true);
  } catch {
    return null;
  }
}

function textsOf(desc: ElementDescription): string[] {
  return [desc.name, desc.text, desc.label, desc.placeholder, desc.fieldName].filter((t): t is string => !!t && t.trim().length > 0);
}

/** Runs in the page: same tag and input type and, when asked, one of the recorded texts still on the element. */
function sameKind(el: Element, want: { tag: string; inputType: string; texts: string[] | null }): boolean {
  if (el.tagName !== want.tag) return false;
  if (want.tag === 'INPUT' && (el as HTMLInputElement).type !== want.inputType) return false;
  const style = getComputedStyle(el);
  const rect = el.getBoundingClientRect();
  if (style.visibility === 'hidden' || style.display === 'none' || (rect.width === 0 && rect.height === 0 && want.inputType !== 'file')) return false;
  if (!want.texts) return true;
  const norm = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim().toLowerCase();
  const labels = Array.from((el as HTMLInputElement).labels ?? []).map((l) => norm(l.textContent));
  const own = [norm((el as HTMLElement).innerText ?? el.textContent), norm(el.getAttribute('aria-label')), norm(el.getAttribute('placeholder')), norm(el.getAttribute('name')), norm((el as HTMLInputElement).value), ...labels];
  return want.texts.some((t) => own.includes(norm(t)));
}

/** Same document: same origin and path (the query and the fragment may differ between runs). */
export function samePage(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    return x.origin === y.origin && x.pathname.replace(/\/+$/, '') === y.pathname.replace(/\/+$/, '');
  } catch {
    return a === b;
  }
}

/** Actions a replay performs again; the others (a request to a human, reading the page) hand over to the agent or are left out. */

export interface ReplayPlan {
  /** The actions to perform again, in order. */
  steps: RecordedStep[];
  /** The recorded end of the task (its done). */
  done?: RecordedStep;
  /** The task gives an answer read off the page (structured output, or the recording read the page): one model call makes it. */
  needsAnswer: boolean;
  /** Where the plan stops before the end: an action only a person or the agent can take again (a request to a human). */
  handOverAt?: RecordedStep;
}

/** What of a recording a replay performs: what was performed, in order; the end; whether the answer needs the model. */
export function replayPlan(recorded: RecordedStep[], params: Pick<TaskParams, 'outputType'>): ReplayPlan {
  const performed = recorded.filter((s) => s.outcome === 'ok');
  const plan: ReplayPlan = { steps: [], needsAnswer: params.outputType !== 'text' || performed.some((s) => s.action === 'extract') };
  for (const s of performed) {
    if (s.action === 'done') {
      plan.done = s;
      break;
    }
    if (s.action === 'request_human_input' || s.action === 'manual_double_click') {
      plan.handOverAt = s;
      break;
    }
    if (REPLAYABLE_ACTIONS.has(s.action)) plan.steps.push(s);
  }
  return plan;
}

/** One line for a recorded step: what it did and on what (for the agent's hint and the record page). */
export function stepLine(s: RecordedStep): string {
  const on = s.element ? ` ${s.element.role} "${s.element.name || s.element.text || s.element.label || s.element.placeholder || s.element.css}"` : '';
  const args = Object.entries(s.args)
    .filter(([k]) => k !== 'index' || s.action === 'switch_tab')
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(' ');
  return `${s.action}${on}${args ? ` (${args})` : ''} on ${s.urlBefore}`;
}
