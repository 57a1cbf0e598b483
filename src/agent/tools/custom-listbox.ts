/**
 * A custom listbox or combobox (role=listbox/combobox with role=option children) chosen by its
 * option's text: opened with a click when its list is not shown, then the option clicked.
 */
import type { Frame, Locator } from 'playwright-core';
import type { ToolContext } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { ACTION_TIMEOUT_MS } from './element-target';

const CHOSEN = 'data-agent-option';

/** What the page says of the widget: whether it is one, its list shown, its options, the one wanted. */
interface ListboxState {
  isListbox: boolean;
  shown: boolean;
  options: string[];
  found: boolean;
}

/** Runs in the page on the widget: finds its list and marks the wanted option. Self-contained. */
function readListbox(el: Element, args: { wanted: string; mark: string }): ListboxState {
  const normalize = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();
  const role = el.getAttribute('role') ?? '';
  const owner = el.closest('[role=combobox], [role=listbox]') ?? (['combobox', 'listbox'].includes(role) || el.getAttribute('aria-haspopup') === 'listbox' ? el : null);
  if (!owner) return { isListbox: false, shown: false, options: [], found: false };
  const ids = `${owner.getAttribute('aria-controls') ?? ''} ${owner.getAttribute('aria-owns') ?? ''}`.split(/\s+/).filter(Boolean);
  const list =
    (owner.getAttribute('role') === 'listbox' ? owner : null) ??
    ids.map((id) => document.getElementById(id)).find((found) => found !== null) ??
    owner.querySelector('[role=listbox]') ??
    owner.parentElement?.querySelector('[role=listbox]') ??
    // A button that opens a list it does not name: the next list on the page.
    (owner.getAttribute('aria-haspopup') === 'listbox' ? Array.from(document.querySelectorAll('[role=listbox]')).find((found) => owner.compareDocumentPosition(found) & Node.DOCUMENT_POSITION_FOLLOWING) : undefined) ??
    null;
  const shownNow = (node: Element) => {
    const box = node.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(node).visibility !== 'hidden';
  };
  const options = list ? Array.from(list.querySelectorAll('[role=option]')).filter(shownNow) : [];
  for (const marked of Array.from(document.querySelectorAll(`[${args.mark}]`))) marked.removeAttribute(args.mark);
  const wanted = normalize(args.wanted);
  const texts = options.map((option) => normalize(option.textContent ?? ''));
  let at = texts.findIndex((text) => text === wanted);
  if (at < 0 && wanted) at = texts.findIndex((text) => text.includes(wanted));
  if (at >= 0) options[at].setAttribute(args.mark, '1');
  return { isListbox: true, shown: options.length > 0, options: options.slice(0, 30).map((option) => (option.textContent ?? '').replace(/\s+/g, ' ').trim()), found: at >= 0 };
}

/**
 * Chooses `wanted` in the custom widget at `locator`; undefined when it is not one. Throws
 * with its options when none matches.
 */
export async function chooseInListbox(ctx: ToolContext, locator: Locator, frame: Frame, name: string, wanted: string): Promise<string | undefined> {
  const action = `Selecting "${wanted}" in ${name}`;
  const read = () => attempt(ctx.signal, action, () => abortable(locator.evaluate(readListbox, { wanted, mark: CHOSEN }, { timeout: ACTION_TIMEOUT_MS }), ctx.signal));
  let state = await read();
  if (!state.isListbox) return undefined;
  if (!state.found) {
    // Its list is not open, or shows only some options: opened, typed into when it takes text.
    await attempt(ctx.signal, action, () => abortable(locator.click({ timeout: ACTION_TIMEOUT_MS }), ctx.signal));
    state = await read();
    if (!state.found && (await locator.evaluate((el) => el instanceof HTMLInputElement).catch(() => false))) {
      await attempt(ctx.signal, action, () => abortable(locator.fill(wanted, { timeout: ACTION_TIMEOUT_MS }), ctx.signal));
      state = await read();
    }
  }
  if (!state.found) throw new Error(`${name} has no option "${wanted}"${state.options.length ? `; its options are: ${state.options.map((option) => `"${option}"`).join(', ')}` : ' shown'}`);
  const option = frame.locator(`[${CHOSEN}]`).first();
  const label = (await option.textContent({ timeout: ACTION_TIMEOUT_MS }).catch(() => wanted))?.replace(/\s+/g, ' ').trim() || wanted;
  await attempt(ctx.signal, action, () => abortable(option.click({ timeout: ACTION_TIMEOUT_MS }), ctx.signal));
  return label;
}
