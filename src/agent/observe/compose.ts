import type { FarAway, Position } from './page-script';

export interface ComposeInput {
  url: string;
  title: string;
  tabs: { index: number; url: string; title: string; active: boolean }[];
  viewport: { width: number; height: number; scrollY: number; scrollHeight: number };
  /** The page fits its viewport but a box in it scrolls. */
  paneScrolls?: boolean;
  /** Label of an open modal dialog; the elements behind it are left out. */
  modal: string | null;
  blockedByModal: number;
  /** In document order, frames after their parents. */
  elements: { line: string; position: Position; distance: number }[];
  /** Off-screen elements too far away to be described: only counted. */
  farAway: FarAway;
  text: string[];
  textAbove: number;
  textBelow: number;
  /** The text below the viewport when the page ends soon after it (page-script.ts), else empty. */
  textBelowLines?: string[];
}

/** Off-screen elements further than this many viewport heights are only counted, never listed. */
export const NEARBY_VIEWPORTS = 1;
const MAX_HEADER_FIELD = 200;
const MAX_TABS = 10;
const MIN_CUT_LINE = 40;
const NONE_IN_VIEW = '(none in the viewport)';
const NO_TEXT = '(none)';
const ONLY_LABELS = '(only the labels of the elements above)';
/** Closes an observation that shows all the page holds: nothing off screen, nothing left out. */
export const WHOLE_PAGE = '(this is the whole page)';
export const PANE_SCROLLS = 'the page fits the viewport, but an area in it scrolls (scroll to see more of it)';
/** Opens the text below the viewport, shown when it is short (the page ends soon after the viewport). */
export const REST_OF_PAGE = "The rest of the page's text (below the viewport):";
const SECTION_TITLES = { above: 'Above the viewport:', below: 'Below the viewport:', side: 'Left or right of the viewport:' };

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

type OffScreen = Exclude<Position, 'in'>;
type Counts = Record<OffScreen, number>;
type Element = ComposeInput['elements'][number];

/**
 * Lays the observation out within `tokenBudget` (tokens ≈ characters / 4). Whole lines are
 * dropped by priority: off-screen elements first (the farthest first), then visible text from
 * its end, then elements in view from their end; what is dropped is summarised in a line.
 */
export function composeObservation(input: ComposeInput, tokenBudget: number): string {
  const maxChars = Math.max(0, Math.floor(tokenBudget) * 4);
  const header = headerLines(input);
  const inView = input.elements.filter((element) => element.position === 'in');
  const offScreen = input.elements.filter((element) => element.position !== 'in');
  const count = (position: OffScreen) => offScreen.filter((element) => element.position === position).length + input.farAway[position];
  const total: Counts = { above: count('above'), below: count('below'), side: count('side') };

  // Counts only shrink as lines get listed, so the worst-case summaries reserve enough room.
  const fixed = [...header, 'Interactive elements:', ...summaryLines(total, { above: 0, below: 0, side: 0 }, inView.length), 'Visible text:', ...textNote(true, input.textBelow)];
  const room = { chars: maxChars - size(fixed) };
  const keptInView = keepWithin(inView, room);
  if (!inView.length) room.chars -= NONE_IN_VIEW.length + 1;
  const text = withoutLabels(input.text, keptInView);
  const { keptText, truncated } = keepText(text, room);
  if (!truncated) room.chars += '(visible text truncated)'.length + 1;
  if (!keptText.length && !truncated) room.chars -= ONLY_LABELS.length + 1;
  const { sections, listed } = nearbyOffScreen(offScreen, NEARBY_VIEWPORTS * input.viewport.height, room);
  const rest = truncated ? [] : restOfPage(withoutLabels(input.textBelowLines ?? [], input.elements.map((e) => e.line)), input.textBelow, room);

  const lines = [...header, 'Interactive elements:'];
  if (!inView.length) lines.push(NONE_IN_VIEW);
  lines.push(...keptInView, ...sections);
  lines.push(...summaryLines(total, listed, inView.length - keptInView.length));
  const empty = input.text.length ? ONLY_LABELS : NO_TEXT;
  lines.push('Visible text:', ...(keptText.length || truncated ? keptText : [empty]), ...(rest.length ? [REST_OF_PAGE, ...rest] : textNote(truncated, input.textBelow)));
  const offScreenCount = total.above + total.below + total.side + input.textAbove + input.textBelow;
  if (!header.some((line) => line.startsWith('Scroll: ')) && !offScreenCount && keptInView.length === inView.length && !truncated) lines.push(WHOLE_PAGE);
  return withinChars(lines, maxChars);
}

/** The text's lines but those an element listed already shows as its label ("Send" of `[4] button "Send"`). */
function withoutLabels(text: string[], elementLines: string[]): string[] {
  const labels = new Set(elementLines.flatMap((line) => [...line.matchAll(/"([^"]+)"/g)].map((m) => m[1].trim())));
  return text.filter((line) => !labels.has(line.trim()));
}

/** The page's address, title, tabs, scroll position and open modal. */
function headerLines(input: ComposeInput): string[] {
  const { viewport } = input;
  const header = [`URL: ${clip(input.url, MAX_HEADER_FIELD)}`, `Title: ${clip(input.title, MAX_HEADER_FIELD)}`];
  const tabs = input.tabs.slice(0, MAX_TABS).map((tab) => `[${tab.index}] ${clip(tab.title || tab.url, 60)}${tab.active ? ' (active)' : ''}`);
  if (input.tabs.length > MAX_TABS) tabs.push(`… ${input.tabs.length - MAX_TABS} more`);
  header.push(`Tabs: ${tabs.join(' | ')}`);
  if (viewport.scrollHeight > viewport.height + 1) {
    header.push(`Scroll: ${viewport.scrollY}px of ${viewport.scrollHeight}px page height (viewport ${viewport.width}x${viewport.height})`);
  } else if (input.paneScrolls) {
    header.push(`Scroll: ${PANE_SCROLLS}`);
  }
  if (input.modal !== null) {
    header.push(`A modal dialog is open ("${clip(input.modal, 60)}"): only its elements are listed; ${plural(input.blockedByModal, 'element')} behind it cannot be used until it is closed.`);
  }
  return header;
}

/** What is not listed: elements in view left out, and off-screen elements by where they are. */
function summaryLines(total: Counts, listed: Counts, inViewLeft: number): string[] {
  const lines: string[] = [];
  if (inViewLeft) lines.push(`... ${plural(inViewLeft, 'more interactive element')} in the viewport not listed (observation size limit)`);
  const above = total.above - listed.above;
  const below = total.below - listed.below;
  const side = total.side - listed.side;
  if (above) lines.push(`... ${plural(above, 'more interactive element')} above the viewport (scroll up to see them)`);
  if (below) lines.push(`... ${plural(below, 'more interactive element')} below the viewport (scroll down to see them)`);
  if (side) lines.push(`... ${plural(side, 'more interactive element')} left or right of the viewport`);
  return lines;
}

function textNote(truncated: boolean, textBelow: number): string[] {
  const lines: string[] = [];
  if (truncated) lines.push('(visible text truncated)');
  if (textBelow > 0) lines.push(`(about ${textBelow} more characters of text below the viewport: scroll down or use extract to read them)`);
  return lines;
}

/**
 * The lines of the text below the viewport, all of them or none, in the room left (and the
 * room of the note they stand for). The default model, a camera's weight 389 characters below
 * the viewport, pressed the page's links and went back for 12 steps, and never scrolled.
 */
function restOfPage(lines: string[], textBelow: number, room: { chars: number }): string[] {
  if (!lines.length) return [];
  const within = { chars: room.chars + size(textNote(false, textBelow)) - REST_OF_PAGE.length - 1 };
  const { keptText, truncated } = keepText(lines, within);
  if (truncated) return [];
  room.chars = within.chars;
  return keptText;
}

const size = (lines: string[]): number => lines.reduce((total, line) => total + line.length + 1, 0);

/** The elements' lines from the first, as long as they fit in the room left. */
function keepWithin(elements: Element[], room: { chars: number }): string[] {
  const kept: string[] = [];
  for (const element of elements) {
    if (element.line.length + 1 > room.chars) break;
    kept.push(element.line);
    room.chars -= element.line.length + 1;
  }
  return kept;
}

/** The visible text's lines from the first, the first that does not fit cut at a word (if enough room is left). */
function keepText(text: string[], room: { chars: number }): { keptText: string[]; truncated: boolean } {
  const keptText: string[] = [];
  for (const line of text) {
    if (line.length + 1 <= room.chars) {
      keptText.push(line);
      room.chars -= line.length + 1;
      continue;
    }
    if (room.chars > MIN_CUT_LINE) {
      const cut = line.slice(0, room.chars - 2).replace(/\s+\S*$/, '');
      keptText.push(`${cut}…`);
      room.chars -= cut.length + 2;
    }
    return { keptText, truncated: true };
  }
  return { keptText, truncated: false };
}

/** Nearest off-screen elements first, within `limit` pixels, as long as they fit; printed in document order by section. */
function nearbyOffScreen(offScreen: Element[], limit: number, room: { chars: number }): { sections: string[]; listed: Counts } {
  const chosen = new Set<number>();
  const listed: Counts = { above: 0, below: 0, side: 0 };
  const byDistance = offScreen
    .map((element, order) => ({ element, order }))
    .filter(({ element }) => element.distance <= limit)
    .sort((first, second) => first.element.distance - second.element.distance);
  for (const { element, order } of byDistance) {
    const position = element.position as OffScreen;
    const cost = element.line.length + 1 + (listed[position] ? 0 : SECTION_TITLES[position].length + 1);
    if (cost > room.chars) break;
    chosen.add(order);
    listed[position] += 1;
    room.chars -= cost;
  }
  const section = (position: OffScreen): string[] => {
    const lines = offScreen.filter((element, order) => element.position === position && chosen.has(order)).map((element) => element.line);
    return lines.length ? [SECTION_TITLES[position], ...lines] : [];
  };
  return { sections: [...section('above'), ...section('below'), ...section('side')], listed };
}

/** Only a header longer than the whole budget needs this: whole lines dropped from the end. */
function withinChars(lines: string[], maxChars: number): string {
  let text = lines.join('\n');
  while (text.length > maxChars && lines.length > 1) {
    lines.pop();
    text = lines.join('\n');
  }
  return text;
}
