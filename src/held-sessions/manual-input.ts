import type { Page } from 'playwright-core';
import type { ManualAction } from '../contracts/actions';
import type { ElementDescription } from '../contracts/recording';
import type { InteractionAction } from '../contracts/session-types';
import { HUMAN_TYPE_MAX_MS, humanTypingDelays } from '../contracts/schemas/message.schema';
import { STATE_KEY } from '../browser/page-elements';
import { describeAtPoint } from '../recording/describe';

/** How an action event names a person's action: what was typed says how much, never what. */
export interface ManualDone {
  name: ManualAction;
  target: string;
}

/** What a person's action is recorded with: its arguments, and the element a click lands on. */
export interface ManualFacts {
  args: Record<string, unknown>;
  element?: ElementDescription;
}

/** Performs a person's click, typing or key press on the page (page coordinates); undefined for an action it does not know. */
export async function performManual(page: Page, action: InteractionAction): Promise<ManualDone | undefined> {
  switch (action.type) {
    case 'CLICK':
      await page.mouse.click(action.x, action.y);
      return { name: 'manual_click', target: `(${action.x}, ${action.y})` };
    case 'DOUBLE_CLICK':
      await page.mouse.dblclick(action.x, action.y);
      return { name: 'manual_double_click', target: `(${action.x}, ${action.y})` };
    case 'TYPE':
      if (action.humanLike) await typeLikeAPerson(page, action.text);
      else await page.keyboard.type(action.text);
      // What a human types may be a password: the event says how much, not what.
      return { name: 'manual_type', target: `${[...action.text].length} characters` };
    case 'KEY_PRESS':
      await page.keyboard.press(action.key);
      return { name: 'manual_key_press', target: action.key };
    default:
      return undefined;
  }
}

/** A person's rhythm: 40-150 ms between keys, not a fixed beat; all of it within HUMAN_TYPE_MAX_MS. */
async function typeLikeAPerson(page: Page, text: string): Promise<void> {
  const keys = [...text];
  const delays = humanTypingDelays(keys.length);
  const deadline = Date.now() + HUMAN_TYPE_MAX_MS;
  for (const [i, ch] of keys.entries()) {
    await page.keyboard.type(ch);
    if (Date.now() < deadline) await new Promise((r) => setTimeout(r, delays[i]));
  }
}

/**
 * What a person's action is recorded with: the element under a click, described before the
 * click changes the page; what was typed, unless the focused field is a secret one (a
 * password, a one-time code), whose text is never recorded.
 */
export async function manualStepFacts(page: Page, action: InteractionAction): Promise<ManualFacts> {
  switch (action.type) {
    case 'CLICK':
    case 'DOUBLE_CLICK':
      return { args: { x: action.x, y: action.y }, element: await describeAtPoint(page.mainFrame(), action.x, action.y) };
    case 'TYPE': {
      const secret = await focusedIsSecret(page).catch(() => true);
      return { args: secret ? { text: null, secret: true } : { text: action.text } };
    }
    case 'KEY_PRESS':
      return { args: { key: action.key } };
    default:
      return { args: {} };
  }
}

/** Frames inside frames followed at most this deep to the focused element (deeper: taken for secret). */
const MAX_FOCUS_DEPTH = 10;

/**
 * Whether what a person types goes into a secret field: the focused element, followed into
 * open shadow roots and through frames (a frame's own focused element, whatever its origin),
 * is a password or one-time-code field, a card number, or a field a secret was typed into.
 */
async function focusedIsSecret(page: Page): Promise<boolean> {
  let frame = page.mainFrame();
  for (let depth = 0; depth < MAX_FOCUS_DEPTH; depth++) {
    const handle = await frame.evaluateHandle(() => {
      let el = document.activeElement;
      while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
      return el;
    });
    try {
      const el = handle.asElement();
      if (!el) return false;
      const inner = await el.contentFrame();
      if (!inner) return await el.evaluate(isSecretField, STATE_KEY);
      frame = inner;
    } finally {
      await handle.dispose();
    }
  }
  return true;
}

/** Runs in the page: whether a field is one whose value is secret. */
function isSecretField(el: Element, stateKey: string): boolean {
  const field = el as HTMLInputElement;
  const marked = (window as unknown as Record<string, { secrets?: WeakSet<Element> } | undefined>)[stateKey]?.secrets?.has(el);
  return field.type === 'password' || /one-time-code|cc-number|cc-csc/.test(field.autocomplete ?? '') || !!marked;
}
