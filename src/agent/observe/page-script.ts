/* istanbul ignore file -- these functions run inside the page, where coverage counters do not exist */
import type { ElementInfo } from '../../browser/page-elements';

/** A rectangle in a frame's own CSS pixels (its viewport coordinates). */
export interface Region {
  top: number;
  bottom: number;
  left: number;
  right: number;
}

export interface SnapshotArgs {
  stateKey: string;
  indexAttribute: string;
  /** The lowest index a new element may get (indices are unique across the frames of a page). */
  nextIndex: number;
  /** For the main frame: a new document numbers its elements from 1 again. */
  restartOnNewDocument: boolean;
  /** The part of this frame the user sees; null means the frame's whole viewport (main frame). */
  region: Region | null;
  /** Elements farther than this from the region (CSS pixels) are only counted in `farAway`: no line, no index yet. */
  describeWithin: number;
}

export type Position = 'in' | 'above' | 'below' | 'side';
export type FarAway = Record<Exclude<Position, 'in'>, number>;

export interface SnapshotElement {
  index: number;
  /** `[index] role "label" hints`, ready to print. */
  line: string;
  position: Position;
  /** CSS pixels between the element and the visible region (0 when in view). */
  distance: number;
}

export interface FrameSnapshot {
  title: string;
  /** The next free index after this frame. */
  nextIndex: number;
  elements: SnapshotElement[];
  /** Interactive elements beyond `describeWithin`, by direction. */
  farAway: FarAway;
  /** Visible text in the region, one line per block. */
  text: string[];
  /** Characters of text above / below the region. */
  textAbove: number;
  textBelow: number;
  /** The text below the region, one line per block, while it is short (up to BELOW_TEXT_CHARS); empty otherwise. */
  textBelowLines: string[];
  /** Label of the open modal dialog, when one blocks the rest of the frame. */
  modal: string | null;
  /** Interactive elements left out because a modal dialog covers them. */
  blockedByModal: number;
  viewport: { width: number; height: number; scrollY: number; scrollHeight: number };
  /** The document fits its viewport but a box in it scrolls (an app's inner pane holds more). */
  paneScrolls: boolean;
}

/**
 * Walks one frame's flat tree (open shadow roots and slots included) in a single pass:
 * numbers the interactive elements, formats their lines and gathers the visible text.
 * Playwright serialises this function into the page, so it must not use anything from
 * the module scope: every helper is declared inside it. It returns the FrameSnapshot as
 * JSON: one string crosses the protocol ten times faster than thousands of small objects.
 */
export function snapshotFrame(args: SnapshotArgs): string {
  const WIDGET_ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option',
    'switch', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem',
  ]);
  // Fields: their content is their value, so it never names them.
  const FIELD_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'select', 'slider', 'spinbutton', 'file']);
  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'TITLE', 'META', 'LINK', 'IFRAME', 'FRAME', 'OBJECT']);
  const BLOCK_TAGS = new Set([
    'ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BR', 'CAPTION', 'DD', 'DETAILS', 'DIALOG', 'DIV', 'DL', 'DT', 'FIELDSET',
    'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HR', 'LEGEND', 'LI', 'MAIN',
    'NAV', 'OL', 'P', 'PRE', 'SECTION', 'SUMMARY', 'TABLE', 'TBODY', 'TFOOT', 'THEAD', 'TR', 'UL',
  ]);
  // Inline elements that still read as separate words ("Edit" "Delete", not "EditDelete").
  const GAP_TAGS = new Set(['A', 'BUTTON', 'INPUT', 'LABEL', 'SELECT', 'TD', 'TH', 'TEXTAREA', 'IMG']);
  const FORM_TAGS = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'FIELDSET', 'OPTION', 'OPTGROUP']);
  // Elements that may be clickable only through a JS listener; tested for cursor:pointer when in view.
  const POINTER_TAGS = new Set(['DIV', 'SPAN', 'LI', 'IMG', 'TD', 'TH', 'TR', 'P', 'I', 'svg', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6']);
  const VALUE_TYPES = new Set(['text', 'email', 'password', 'search', 'tel', 'url', 'number', 'date', 'time', 'datetime-local', 'month', 'week', 'range', 'color']);
  const QUIET_TYPES = new Set(['text', 'button', 'submit', 'reset', 'checkbox', 'radio', 'image']);
  const SECRET_WORDS =
    /pass(word|code|phrase)?\b|passwd|\bpin\b|secret|\botp\b|one[- ]?time|2fa|mfa|verification code|security code|auth(entication)? code|\bcvc\b|\bcvv\b|card number|api[-_ ]?key|token|access[-_ ]?key|private[-_ ]?key|signing[-_ ]?key|client[-_ ]?secret|bearer|credential|session[-_ ]?key|license[-_ ]?key|recovery[-_ ]?(key|code)|seed phrase/i;
  const SECRET_AUTOCOMPLETE = /password|one-time-code|cc-number|cc-csc/;
  const MAX_LABEL = 80;
  // Text below the region is kept, to be shown, only while this short (the end of a page a little longer than its viewport).
  const BELOW_TEXT_CHARS = 600;
  const MAX_VALUE = 60;
  const MAX_OPTIONS = 8;

  const win = window as unknown as Record<string, any>;
  let state = win[args.stateKey];
  const newDocument = !state;
  if (!state) {
    state = { ids: new WeakMap<Element, number>(), secrets: new WeakSet<Element>(), max: 0, modal: null };
    Object.defineProperty(window, args.stateKey, { value: state, configurable: true, writable: true, enumerable: false });
  }
  let next = newDocument && args.restartOnNewDocument ? 1 : Math.max(args.nextIndex, state.max + 1);

  const vw = window.innerWidth;
  const vh = window.innerHeight;
  const region: Region = args.region ?? { top: 0, left: 0, bottom: vh, right: vw };

  const collapse = (value: string): string => value.replace(/\s+/g, ' ').trim();
  const truncate = (value: string, max: number): string => (value.length > max ? `${value.slice(0, max - 1).trimEnd()}…` : value);
  const quote = (value: string): string => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

  const isVisible = (el: Element, opacity: boolean): boolean => {
    if (typeof el.checkVisibility === 'function') {
      return el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true, opacityProperty: opacity, checkOpacity: opacity } as CheckVisibilityOptions);
    }
    const style = getComputedStyle(el);
    return style.visibility !== 'hidden' && (!opacity || style.opacity !== '0');
  };
  const parentOf = (el: Element): Element | null => el.parentElement ?? ((el.parentNode as ShadowRoot | null)?.host ?? null);

  /** Text of a subtree as a reader would name it: alt texts, button values, no scripts or hidden-for-AT parts. */
  const textOf = (root: Element, limit: number): string => {
    let out = '';
    const go = (node: Node): void => {
      if (out.length > limit) return;
      if (node.nodeType === 3) {
        out += (node as Text).data;
        return;
      }
      if (node.nodeType !== 1) return;
      const element = node as Element;
      const tag = element.tagName;
      if (SKIP_TAGS.has(tag) || tag === 'SELECT' || tag === 'TEXTAREA' || element.getAttribute('aria-hidden') === 'true') return;
      if (tag === 'IMG') {
        out += ` ${element.getAttribute('alt') ?? ''} `;
        return;
      }
      if (tag === 'INPUT') {
        const input = element as HTMLInputElement;
        if (input.type === 'button' || input.type === 'submit' || input.type === 'reset') out += ` ${input.value} `;
        return;
      }
      children(element);
    };
    const children = (element: Element): void => {
      const gap = BLOCK_TAGS.has(element.tagName) || GAP_TAGS.has(element.tagName);
      if (gap) out += ' ';
      if (element.tagName === 'SLOT') {
        const assigned = (element as HTMLSlotElement).assignedNodes();
        if (assigned.length) {
          for (const slotted of assigned) go(slotted);
          return;
        }
      }
      const host: ParentNode = element.shadowRoot ?? element;
      for (let child = host.firstChild; child; child = child.nextSibling) go(child);
      if (gap) out += ' ';
    };
    children(root);
    return collapse(out);
  };

  const inputType = (el: Element): string => (el.tagName === 'INPUT' ? (el as HTMLInputElement).type : '');

  const isEditableRoot = (el: Element): boolean => {
    const editable = el.getAttribute('contenteditable');
    return editable !== null && editable !== 'false';
  };

  /** The role to print, or null when the element is not interactive by markup. */
  const roleOf = (el: Element, tag: string): string | null => {
    const explicit = el.getAttribute('role')?.trim().split(/\s+/)[0].toLowerCase();
    if (explicit && WIDGET_ROLES.has(explicit)) return explicit;
    switch (tag) {
      case 'A':
      case 'AREA':
        if (el.hasAttribute('href')) return 'link';
        break;
      case 'BUTTON':
        // A button that opens a listbox is a select made by hand: chosen in by select_option.
        return el.getAttribute('aria-haspopup') === 'listbox' ? 'combobox' : 'button';
      case 'SELECT':
        return 'select';
      case 'TEXTAREA':
        return 'textbox';
      case 'SUMMARY':
        return 'button';
      case 'INPUT': {
        const type = inputType(el);
        if (type === 'hidden') return null;
        if (type === 'button' || type === 'submit' || type === 'reset' || type === 'image') return 'button';
        if (type === 'checkbox' || type === 'radio') return type;
        if (type === 'range') return 'slider';
        if (type === 'number') return 'spinbutton';
        if (type === 'file') return 'file';
        return 'textbox';
      }
    }
    if (isEditableRoot(el)) return 'textbox';
    if (el.hasAttribute('onclick')) return 'clickable';
    if (el.hasAttribute('tabindex') && (el as HTMLElement).tabIndex >= 0 && getComputedStyle(el).cursor === 'pointer') return 'clickable';
    return null;
  };

  /** A listener-only clickable (cursor:pointer starts here, and no real control inside); costly, so only for elements in view. */
  const looksClickable = (el: Element, rect: DOMRect): boolean => {
    if (!intersects(rect)) return false;
    if (getComputedStyle(el).cursor !== 'pointer') return false;
    const parent = parentOf(el);
    if (parent && getComputedStyle(parent).cursor === 'pointer') return false;
    return !el.querySelector('a[href],button,input,select,textarea,[role=button],[role=link],[onclick]');
  };

  const labelOf = (el: Element, tag: string, role: string): { label: string; from: string } => {
    const ids = el.getAttribute('aria-labelledby');
    if (ids) {
      const root = el.getRootNode() as Document | ShadowRoot;
      const text = collapse(
        ids
          .split(/\s+/)
          .map((id) => {
            const target = id ? root.getElementById(id) : null;
            return target ? textOf(target, 200) : '';
          })
          .join(' '),
      );
      if (text) return { label: text, from: 'labelledby' };
    }
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return { label: collapse(aria), from: 'aria' };
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') {
      const labels = (el as HTMLInputElement).labels;
      if (labels && labels.length) {
        const text = collapse(Array.from(labels, (label) => textOf(label, 200)).join(' '));
        if (text) return { label: text, from: 'label' };
      }
      const type = inputType(el);
      if (type === 'button' || type === 'submit' || type === 'reset') {
        const value = (el as HTMLInputElement).value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '');
        if (value) return { label: collapse(value), from: 'value' };
      }
      if (type === 'image') return { label: el.getAttribute('alt') || el.getAttribute('value') || 'Submit', from: 'alt' };
    }
    if (tag === 'IMG' && el.getAttribute('alt')) return { label: collapse(el.getAttribute('alt')!), from: 'alt' };
    if (!FIELD_ROLES.has(role)) {
      const text = textOf(el, 200);
      if (text) return { label: text, from: 'content' };
    }
    const placeholder = el.getAttribute('placeholder') ?? el.getAttribute('aria-placeholder');
    if (placeholder && placeholder.trim()) return { label: collapse(placeholder), from: 'placeholder' };
    const title = el.getAttribute('title');
    if (title && title.trim()) return { label: collapse(title), from: 'title' };
    if (role === 'link') return { label: el.getAttribute('href') ?? '', from: 'href' };
    return { label: el.getAttribute('name') ?? '', from: 'name' };
  };

  const isSecret = (el: Element, label: string): boolean => {
    if (state.secrets.has(el)) return true;
    const secret =
      inputType(el) === 'password' ||
      SECRET_AUTOCOMPLETE.test((el.getAttribute('autocomplete') ?? '').toLowerCase()) ||
      SECRET_WORDS.test(`${el.getAttribute('name') ?? ''} ${el.id} ${label}`);
    // A password field switched to type=text by a "show password" toggle stays secret.
    if (secret) state.secrets.add(el);
    return secret;
  };

  const filledButInvalid = (el: Element, tag: string): boolean => {
    if (el.getAttribute('aria-invalid') === 'true') return true;
    if (tag !== 'INPUT' && tag !== 'TEXTAREA' && tag !== 'SELECT') return false;
    const field = el as HTMLInputElement;
    return field.value !== '' && field.willValidate && !field.validity.valid;
  };

  const hintsOf = (el: Element, tag: string, role: string, label: { label: string; from: string }): string[] => {
    const hints: string[] = [];
    const type = inputType(el);
    const value = (text: string, secret: boolean): void => {
      // A field a secret was typed into shows its placeholder; any other secret field only that it holds something.
      if (text) hints.push(`value=${secret ? quote(state.placeholders?.get(el) ?? '••••') : quote(truncate(collapse(text), MAX_VALUE))}`);
      // Said outright, so a model filling a form sees which fields are still to do.
      else hints.push('empty');
    };
    if (tag === 'INPUT') {
      if (!QUIET_TYPES.has(type)) hints.push(`type=${type}`);
      if (VALUE_TYPES.has(type)) value((el as HTMLInputElement).value, isSecret(el, label.label));
      // The files attached, by name: an upload shows on the page only there.
      if (type === 'file') value(Array.from((el as HTMLInputElement).files ?? [], (file) => file.name).join(', '), false);
      // (only a ticked box says so: with `unchecked` on the others, the default model read a
      // box to tick as said and pressed Continue at once, 2 of 2 runs)
      if ((type === 'checkbox' || type === 'radio') && (el as HTMLInputElement).checked) hints.push('checked');
    } else if (tag === 'TEXTAREA') {
      value((el as HTMLTextAreaElement).value, isSecret(el, label.label));
    } else if (tag === 'SELECT') {
      const select = el as HTMLSelectElement;
      const options = Array.from(select.options);
      const selected = Array.from(select.selectedOptions, (option) => collapse(option.label || option.text));
      if (selected.length) hints.push(`value=${quote(truncate(selected.join(', '), MAX_VALUE))}`);
      const names = options.slice(0, MAX_OPTIONS).map((option) => truncate(collapse(option.label || option.text), 30));
      if (options.length > MAX_OPTIONS) names.push(`… ${options.length - MAX_OPTIONS} more`);
      hints.push(`options=${quote(names.join(' | '))}`);
      if (select.multiple) hints.push('multiple');
    } else if (tag === 'BUTTON' && role === 'combobox') {
      // Its options, even while its list is closed (the list it controls, or the next one on the page).
      const ids = `${el.getAttribute('aria-controls') ?? ''} ${el.getAttribute('aria-owns') ?? ''}`.split(/\s+/).filter(Boolean);
      const controlled = ids.map((id) => document.getElementById(id)).find((found) => found !== null);
      const list =
        (controlled && (controlled.getAttribute('role') === 'listbox' ? controlled : controlled.querySelector('[role=listbox]'))) ??
        Array.from(document.querySelectorAll('[role=listbox]')).find((found) => el.compareDocumentPosition(found) & Node.DOCUMENT_POSITION_FOLLOWING) ??
        null;
      const options = list ? Array.from(list.querySelectorAll('[role=option]'), (option) => truncate(collapse(option.textContent ?? ''), 30)).filter(Boolean) : [];
      // The option it shows is its own text ("Normal" of a button labelled "Priority Normal").
      const shown = truncate(collapse(el.textContent ?? ''), 30);
      if (options.includes(shown)) hints.push(`value=${quote(shown)}`);
      if (options.length) hints.push(`options=${quote([...options.slice(0, MAX_OPTIONS), ...(options.length > MAX_OPTIONS ? [`… ${options.length - MAX_OPTIONS} more`] : [])].join(' | '))}`);
    } else if (role === 'textbox' && isEditableRoot(el)) {
      value(textOf(el, MAX_VALUE + 10), isSecret(el, label.label));
    }
    const checked = el.getAttribute('aria-checked');
    if (checked === 'true') hints.push('checked');
    else if (checked === 'mixed') hints.push('mixed');
    if (el.getAttribute('aria-pressed') === 'true') hints.push('pressed');
    if (el.getAttribute('aria-selected') === 'true') hints.push('selected');
    // the pager's page shown, the site's section: aria-current="page", "step", "true"... (and
    // the attribute set with no value, as pages toggling it write it)
    const current = el.getAttribute('aria-current');
    if (current !== null && current !== 'false') hints.push('current');
    const expanded = el.getAttribute('aria-expanded');
    if (expanded === 'true') hints.push('expanded');
    else if (expanded === 'false') hints.push('collapsed');
    else if (tag === 'SUMMARY' && parentOf(el)?.tagName === 'DETAILS') hints.push((parentOf(el) as HTMLDetailsElement).open ? 'expanded' : 'collapsed');
    if ((FORM_TAGS.has(tag) && el.matches(':disabled')) || el.getAttribute('aria-disabled') === 'true') hints.push('disabled');
    if ((el as HTMLInputElement).required === true || el.getAttribute('aria-required') === 'true') hints.push('required');
    // A filled field the form would refuse (an email without @, a number out of range): a
    // press on submit then changes nothing visible but the browser's own bubble.
    if (filledButInvalid(el, tag)) hints.push('invalid');
    if ((tag === 'INPUT' || tag === 'TEXTAREA') && (el as HTMLInputElement).readOnly) hints.push('readonly');
    const placeholder = el.getAttribute('placeholder');
    if (placeholder && label.from !== 'placeholder' && FIELD_ROLES.has(role)) hints.push(`placeholder=${quote(truncate(collapse(placeholder), MAX_VALUE))}`);
    return hints;
  };

  const intersects = (box: DOMRect): boolean => box.bottom > region.top && box.top < region.bottom && box.right > region.left && box.left < region.right;

  // The topmost modal dialog: everything outside it is inert for the user.
  let modal: Element | null = null;
  for (const dialog of Array.from(document.querySelectorAll('dialog[open], [aria-modal="true"]'))) {
    let isModal = false;
    if (dialog.tagName === 'DIALOG' && dialog.getAttribute('aria-modal') !== 'true') {
      try {
        isModal = dialog.matches(':modal');
      } catch {
        isModal = false;
      }
    } else {
      const box = dialog.getBoundingClientRect();
      isModal = box.width > 0 && box.height > 0 && isVisible(dialog, false);
    }
    if (isModal) modal = dialog;
  }
  state.modal = modal;

  const elements: SnapshotElement[] = [];
  const farAway: FarAway = { above: 0, below: 0, side: 0 };
  const lines: string[] = [];
  let line = '';
  let textAbove = 0;
  let textBelow = 0;
  const belowLines: string[] = [];
  let belowLine = '';
  let blockedByModal = 0;
  // Written after the walk: changing attributes during it would force a style recalculation per element.
  const marks: [Element, string][] = [];
  const rects = new Map<Element, DOMRect>();
  const rectOf = (el: Element): DOMRect => {
    let rect = rects.get(el);
    if (!rect) {
      rect = el.getBoundingClientRect();
      rects.set(el, rect);
    }
    return rect;
  };
  const shown = new Map<Element, boolean>();
  const range = document.createRange();

  const flush = (): void => {
    // (a row's empty last cells leave no separator behind)
    const collapsed = collapse(line).replace(/(?:\s*\|)+$/, '');
    if (collapsed && collapsed !== lines[lines.length - 1]) lines.push(collapsed);
    line = '';
    const after = collapse(belowLine).replace(/(?:\s*\|)+$/, '');
    if (after && after !== belowLines[belowLines.length - 1]) belowLines.push(after);
    belowLine = '';
  };
  /** A gap between words, or a table's cell separator, in the line being gathered (and in the one below the region). */
  const gap = (cell: boolean): void => {
    line += cell && /\S/.test(line) ? ' | ' : ' ';
    belowLine += cell && /\S/.test(belowLine) ? ' | ' : ' ';
  };

  const text = (node: Text): void => {
    const data = node.data;
    if (!/\S/.test(data)) {
      line += ' ';
      belowLine += ' ';
      return;
    }
    const parent = node.parentElement;
    if (!parent) return;
    let box = rectOf(parent);
    if (box.width === 0 && box.height === 0) return;
    if (box.height > region.bottom - region.top) {
      // A tall container: place this text node by its own box.
      range.selectNodeContents(node);
      box = range.getBoundingClientRect();
    }
    if (box.bottom <= region.top) {
      textAbove += data.length;
      return;
    }
    if (box.top >= region.bottom) {
      textBelow += data.length;
      if (textBelow <= BELOW_TEXT_CHARS && isVisible(parent, true)) belowLine += data;
      return;
    }
    if (box.right <= region.left || box.left >= region.right) return;
    let visible = shown.get(parent);
    if (visible === undefined) {
      visible = isVisible(parent, true);
      shown.set(parent, visible);
    }
    if (visible) line += data;
  };

  /** A label standing in for its hidden checkbox, radio or file input (custom-styled controls): the label is what gets clicked. */
  const hiddenControlOf = (label: Element): HTMLInputElement | null => {
    const control = (label as HTMLLabelElement).control;
    if (!control || control.tagName !== 'INPUT') return null;
    const type = inputType(control);
    if (type !== 'checkbox' && type !== 'radio' && type !== 'file') return null;
    const box = control.getBoundingClientRect();
    return box.width <= 0 || box.height <= 0 || !isVisible(control, false) ? (control as HTMLInputElement) : null;
  };

  const consider = (el: Element, tag: string, inModal: boolean, inert: boolean, editable: boolean): void => {
    if (editable) return;
    const proxied = tag === 'LABEL' ? hiddenControlOf(el) : null;
    let role = proxied ? roleOf(proxied, 'INPUT') : roleOf(el, tag);
    let rect: DOMRect | undefined;
    if (!role && POINTER_TAGS.has(tag)) {
      rect = rectOf(el);
      if (rect.width > 0 && rect.height > 0 && looksClickable(el, rect)) role = 'clickable';
    }
    if (!role || inert) return;
    rect ??= rectOf(el);
    if (rect.width <= 0 || rect.height <= 0 || !isVisible(el, false)) return;
    if (modal && !inModal) {
      blockedByModal++;
      return;
    }
    let position: Position = 'in';
    let distance = 0;
    if (rect.bottom <= region.top) {
      position = 'above';
      distance = region.top - rect.bottom;
    } else if (rect.top >= region.bottom) {
      position = 'below';
      distance = rect.top - region.bottom;
    } else if (rect.right <= region.left || rect.left >= region.right) {
      position = 'side';
      distance = rect.right <= region.left ? region.left - rect.right : rect.left - region.right;
    }
    if (distance > args.describeWithin) {
      // Only ever summarised: numbering and describing it would cost time for nothing.
      farAway[position as 'above' | 'below' | 'side'] += 1;
      return;
    }
    let index: number | undefined = state.ids.get(el);
    if (index === undefined) {
      // Also renumbers clones of observed elements, which copy the attribute but not the map entry.
      index = next++;
      state.ids.set(el, index);
    }
    if (index > state.max) state.max = index;
    const mark = String(index);
    if (el.getAttribute(args.indexAttribute) !== mark) marks.push([el, mark]);
    const label = proxied ? { label: textOf(el, 200), from: 'label' } : labelOf(el, tag, role);
    const hints = proxied ? hintsOf(proxied, 'INPUT', role, label) : hintsOf(el, tag, role, label);
    const printed = `[${index}] ${role} ${quote(truncate(label.label, MAX_LABEL))}${hints.length ? ` ${hints.join(' ')}` : ''}`;
    elements.push({ index, line: printed, position, distance: Math.round(distance) });
  };

  const visit = (node: Node, inModal: boolean, inert: boolean, editable: boolean): void => {
    if (node.nodeType === 3) {
      if (!modal || inModal) text(node as Text);
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node as Element;
    const tag = el.tagName;
    if (SKIP_TAGS.has(tag)) return;
    if (el === modal) inModal = true;
    if (!inert && el.hasAttribute('inert')) inert = true;
    const block = BLOCK_TAGS.has(tag);
    if (block) flush();
    // a table's cells apart ("Piranesi | 2 November 2026 | 30 November 2026"): a row of dates
    // run together was read by the default model as no due date at all
    else if (GAP_TAGS.has(tag)) gap((tag === 'TD' || tag === 'TH') && el.previousElementSibling !== null);
    consider(el, tag, inModal, inert, editable);
    if (!editable && isEditableRoot(el)) editable = true;
    if (tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'svg') {
      // Options, default text and drawings are not page text; the element line covers them.
    } else if (el.shadowRoot) {
      walk(el.shadowRoot, inModal, inert, editable);
    } else if (tag === 'SLOT' && (el as HTMLSlotElement).assignedNodes().length) {
      for (const child of (el as HTMLSlotElement).assignedNodes()) visit(child, inModal, inert, editable);
    } else {
      walk(el, inModal, inert, editable);
    }
    if (block) flush();
    else if (GAP_TAGS.has(tag)) gap(false);
  };
  const walk = (parent: ParentNode, inModal: boolean, inert: boolean, editable: boolean): void => {
    for (let c = parent.firstChild; c; c = c.nextSibling) visit(c, inModal, inert, editable);
  };

  const root = document.body ?? document.documentElement;
  if (root) visit(root, false, false, false);
  flush();
  for (const [el, mark] of marks) el.setAttribute(args.indexAttribute, mark);
  state.max = Math.max(state.max, next - 1);

  // Tools describe their target with the same rules; the closure is refreshed by every observation.
  state.describe = (el: Element): ElementInfo => {
    const tag = el.tagName;
    const role = roleOf(el, tag) ?? tag.toLowerCase();
    const label = truncate(labelOf(el, tag, role).label, MAX_LABEL);
    return { role, label, secret: isSecret(el, label), tag, inputType: inputType(el) };
  };

  const scroller = document.scrollingElement ?? document.documentElement;
  // Only asked when the document itself fits: a scrolling document is said by its own position.
  const paneScrolls = (): boolean => {
    if (!scroller || scroller.scrollHeight > vh + 1) return false;
    for (const el of Array.from(document.querySelectorAll('body *'))) {
      if (el.scrollHeight <= el.clientHeight + 1) continue;
      const overflow = getComputedStyle(el).overflowY;
      if (overflow === 'auto' || overflow === 'scroll' || overflow === 'overlay') return true;
    }
    return false;
  };
  const snapshot: FrameSnapshot = {
    title: document.title,
    nextIndex: Math.max(next, state.max + 1),
    elements,
    farAway,
    text: lines,
    textAbove,
    textBelow,
    textBelowLines: textBelow <= BELOW_TEXT_CHARS ? belowLines : [],
    modal: modal ? truncate(labelOf(modal, modal.tagName, 'dialog').label, MAX_LABEL) : null,
    blockedByModal,
    viewport: { width: vw, height: vh, scrollY: Math.round(window.scrollY), scrollHeight: scroller ? scroller.scrollHeight : vh },
    paneScrolls: paneScrolls(),
  };
  return JSON.stringify(snapshot);
}

/** Describes one element for a tool's summary, with the observation's own rules when available. */
export function describeInPage(el: Element, stateKey: string): ElementInfo {
  const state = (window as unknown as Record<string, any>)[stateKey];
  if (state?.describe) return state.describe(el) as ElementInfo;
  const tag = el.tagName;
  const type = tag === 'INPUT' ? (el as HTMLInputElement).type : '';
  const label = (el.getAttribute('aria-label') ?? el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 80);
  return { role: tag.toLowerCase(), label, secret: type === 'password', tag, inputType: type };
}
