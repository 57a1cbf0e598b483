import type { ElementHandle, Frame, Locator } from 'playwright-core';
import type { ElementInfo } from '../browser/page-elements';
import type { ElementDescription } from '../contracts/recording';

export type PageSide = Omit<ElementDescription, 'role' | 'name' | 'frame'>;

/**
 * Runs in the page (Playwright serialises it): everything it uses is declared inside. Reads
 * what finds the element again: its text, label, placeholder, test id, stable id, field name,
 * a CSS path and its box.
 */
export function readInPage(el: Element): PageSide {
  const clean = (s: string | null | undefined, max = 120) => (s ?? '').replace(/\s+/g, ' ').trim().slice(0, max) || undefined;
  const looksGenerated = (id: string) => /\d{4,}|[0-9a-f]{8,}|^[:_]|^(ember|react|mui|radix|headlessui)/i.test(id);
  const esc = (s: string) => (typeof CSS !== 'undefined' && CSS.escape ? CSS.escape(s) : s.replace(/[^\w-]/g, (c) => `\\${c}`));
  const path: string[] = [];
  let node: Element | null = el;
  while (node && node.nodeType === 1) {
    const tag = node.tagName.toLowerCase();
    const id = node.getAttribute('id');
    if (id && !looksGenerated(id) && node !== el) {
      path.unshift(`${tag}#${esc(id)}`);
      break;
    }
    const parent: Element | null = node.parentElement;
    const siblings = parent ? Array.from(parent.children).filter((c) => c.tagName === node!.tagName) : [];
    path.unshift(siblings.length > 1 ? `${tag}:nth-of-type(${siblings.indexOf(node) + 1})` : tag);
    if (!parent) break; // the document element, or the top of a shadow root
    node = parent;
  }
  const field = el as HTMLInputElement;
  let label: string | undefined;
  const labels = (field as { labels?: NodeListOf<HTMLLabelElement> | null }).labels;
  if (labels && labels.length) label = clean(labels[0].textContent);
  const rect = el.getBoundingClientRect();
  const id = el.getAttribute('id');
  const tag = el.tagName;
  const text = tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' ? undefined : clean((el as HTMLElement).innerText ?? el.textContent);
  return {
    text,
    label,
    placeholder: clean(el.getAttribute('placeholder')),
    testId: clean(el.getAttribute('data-testid') ?? el.getAttribute('data-test') ?? el.getAttribute('data-qa')),
    id: id && !looksGenerated(id) ? id : undefined,
    fieldName: clean(el.getAttribute('name')),
    tag,
    inputType: tag === 'INPUT' ? field.type : undefined,
    css: path.join(' > '),
    box: { x: Math.round(rect.x), y: Math.round(rect.y), width: Math.round(rect.width), height: Math.round(rect.height) },
  };
}

/** The element's description for the recording; undefined when the page would not say (a closed frame). */
export async function describeForRecording(element: Locator | ElementHandle, frame: Frame, info: ElementInfo, timeoutMs = 2_000): Promise<ElementDescription | undefined> {
  try {
    const side = 'count' in element ? await element.evaluate(readInPage, undefined, { timeout: timeoutMs }) : await element.evaluate(readInPage as (el: Node) => ReturnType<typeof readInPage>);
    return recordedDescription(side, frame, info);
  } catch {
    return undefined;
  }
}

/** What the page read of an element (readInPage) and how the observation names it, as the recording keeps it. */
export function recordedDescription(side: PageSide, frame: Frame, info: ElementInfo): ElementDescription {
  const desc: ElementDescription = { role: info.role, name: info.label, ...dropEmpty(side) };
  if (frame.parentFrame()) desc.frame = { url: frame.url(), ...(frame.name() ? { name: frame.name() } : {}) };
  return desc;
}

/** The element at a point of the viewport (a human's click), described the same way. */
export async function describeAtPoint(frame: Frame, x: number, y: number): Promise<ElementDescription | undefined> {
  try {
    const handle = await frame.evaluateHandle(([px, py]) => {
      let el = document.elementFromPoint(px, py);
      // The control a click lands on: the button around an icon, the link around a span.
      const control = el?.closest('a, button, input, select, textarea, label, summary, [role], [onclick], [tabindex]');
      if (control) el = control;
      return el;
    }, [x, y] as const);
    const el = handle.asElement();
    if (!el) return undefined;
    try {
      const side = await el.evaluate(readInPage, undefined);
      const role = (await el.evaluate((e) => e.getAttribute('role') ?? '')) || implicitRole(side.tag, side.inputType);
      return { role, name: side.text ?? side.label ?? side.placeholder ?? '', ...dropEmpty(side) };
    } finally {
      await el.dispose();
    }
  } catch {
    return undefined;
  }
}

/** The implicit ARIA role of the common controls (for a human's click, which has no observation). */
export function implicitRole(tag: string, inputType?: string): string {
  switch (tag) {
    case 'A':
      return 'link';
    case 'BUTTON':
      return 'button';
    case 'SELECT':
      return 'combobox';
    case 'TEXTAREA':
      return 'textbox';
    case 'INPUT':
      if (inputType === 'checkbox') return 'checkbox';
      if (inputType === 'radio') return 'radio';
      if (inputType === 'submit' || inputType === 'button' || inputType === 'reset') return 'button';
      return 'textbox';
    default:
      return tag.toLowerCase();
  }
}

function dropEmpty<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as T;
}
