import type { FarAway, Position } from './page-script';

export interface ComposeInput {
  url: string;
  title: string;
  tabs: { index: number; url: string; title: string; active: boolean }[];
  viewport: { width: number; height: number; scrollY: number; scrollHeight: number };
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
}

/** Off-screen elements further than this many viewport heights are only counted, never listed. */
export const NEARBY_VIEWPORTS = 1;
const MAX_HEADER_FIELD = 200;
const MAX_TABS = 10;
const MIN_CUT_LINE = 40;
const NONE_IN_VIEW = '(none in the viewport)';
const NO_TEXT = '(none)';
const SECTION_TITLES = { above: 'Above the viewport:', below: 'Below the viewport:', side: 'Left or right of the viewport:' };

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * Lays the observation out within `tokenBudget` (tokens ≈ characters / 4). Whole lines are
 * dropped by priority: off-screen elements first (the farthest first), then visible text from
 * its end, then elements in view from their end; what is dropped is summarised in a line.
 */
export function composeObservation(input: ComposeInput, tokenBudget: number): string {
  const maxChars = Math.max(0, Math.floor(tokenBudget) * 4);
  const { viewport } = input;

  const header = [`URL: ${clip(input.url, MAX_HEADER_FIELD)}`, `Title: ${clip(input.title, MAX_HEADER_FIELD)}`];
  const tabs = input.tabs.slice(0, MAX_TABS).map((t) => `[${t.index}] ${clip(t.title || t.url, 60)}${t.active ? ' (active)' : ''}`);
  if (input.tabs.length > MAX_TABS) tabs.push(`… ${input.tabs.length - MAX_TABS} more`);
  header.push(`Tabs: ${tabs.join(' | ')}`);
  if (viewport.scrollHeight > viewport.height + 1) {
    header.push(`Scroll: ${viewport.scrollY}px of ${viewport.scrollHeight}px page height (viewport ${viewport.width}x${viewport.height})`);
  }
  if (input.modal !== null) {
    header.push(`A modal dialog is open ("${clip(input.modal, 60)}"): only its elements are listed; ${plural(input.blockedByModal, 'element')} behind it cannot be used until it is closed.`);
  }

  const inView = input.elements.filter((e) => e.position === 'in');
  const offScreen = input.elements.filter((e) => e.position !== 'in');
  const count = (p: keyof FarAway) => offScreen.filter((e) => e.position === p).length + input.farAway[p];
  const total = { above: count('above'), below: count('below'), side: count('side') };

  const summaries = (listed: { above: number; below: number; side: number }, inViewLeft: number): string[] => {
    const out: string[] = [];
    if (inViewLeft) out.push(`... ${plural(inViewLeft, 'more interactive element')} in the viewport not listed (observation size limit)`);
    const above = total.above - listed.above;
    const below = total.below - listed.below;
    const side = total.side - listed.side;
    if (above) out.push(`... ${plural(above, 'more interactive element')} above the viewport (scroll up to see them)`);
    if (below) out.push(`... ${plural(below, 'more interactive element')} below the viewport (scroll down to see them)`);
    if (side) out.push(`... ${plural(side, 'more interactive element')} left or right of the viewport`);
    return out;
  };
  const textNote = (truncated: boolean): string[] => {
    const out: string[] = [];
    if (truncated) out.push('(visible text truncated)');
    if (input.textBelow > 0) out.push(`(about ${input.textBelow} more characters of text below the viewport: scroll down or use extract to read them)`);
    return out;
  };

  const size = (lines: string[]): number => lines.reduce((n, l) => n + l.length + 1, 0);
  // Counts only shrink as lines get listed, so the worst-case summaries reserve enough room.
  const fixed = [...header, 'Interactive elements:', ...summaries({ above: 0, below: 0, side: 0 }, inView.length), 'Visible text:', ...textNote(true)];
  let room = maxChars - size(fixed);

  const keptInView: string[] = [];
  for (const e of inView) {
    if (e.line.length + 1 > room) break;
    keptInView.push(e.line);
    room -= e.line.length + 1;
  }
  if (!inView.length) room -= NONE_IN_VIEW.length + 1;

  const keptText: string[] = [];
  let truncated = false;
  for (const l of input.text) {
    if (l.length + 1 <= room) {
      keptText.push(l);
      room -= l.length + 1;
      continue;
    }
    truncated = true;
    if (room > MIN_CUT_LINE) {
      const cut = l.slice(0, room - 2).replace(/\s+\S*$/, '');
      keptText.push(`${cut}…`);
      room -= cut.length + 2;
    }
    break;
  }
  if (!truncated) room += '(visible text truncated)'.length + 1;
  if (!keptText.length && !truncated) room -= NO_TEXT.length + 1;

  // Nearest off-screen elements first, within a few viewports; printed in document order.
  const limit = NEARBY_VIEWPORTS * viewport.height;
  const chosen = new Set<number>();
  const listed = { above: 0, below: 0, side: 0 };
  const byDistance = offScreen.map((e, i) => ({ e, i })).filter(({ e }) => e.distance <= limit).sort((a, b) => a.e.distance - b.e.distance);
  for (const { e, i } of byDistance) {
    const p = e.position as keyof typeof listed;
    const cost = e.line.length + 1 + (listed[p] ? 0 : SECTION_TITLES[p].length + 1);
    if (cost > room) break;
    chosen.add(i);
    listed[p] += 1;
    room -= cost;
  }
  const section = (p: keyof typeof listed): string[] => {
    const out = offScreen.filter((e, i) => e.position === p && chosen.has(i)).map((e) => e.line);
    return out.length ? [SECTION_TITLES[p], ...out] : [];
  };

  const lines = [...header, 'Interactive elements:'];
  if (!inView.length) lines.push(NONE_IN_VIEW);
  lines.push(...keptInView, ...section('above'), ...section('below'), ...section('side'));
  lines.push(...summaries(listed, inView.length - keptInView.length));
  lines.push('Visible text:', ...(keptText.length || truncated ? keptText : [NO_TEXT]), ...textNote(truncated));

  // Only a header longer than the whole budget gets here: drop whole lines from the end.
  let text = lines.join('\n');
  while (text.length > maxChars && lines.length > 1) {
    lines.pop();
    text = lines.join('\n');
  }
  return text;
}
