import fs from 'node:fs';
import type { Aggregate, SplitSummary } from './report';
import { SPLITS, TIERS, type Split } from './tasks';

/** What a results row needs of an eval report (eval.json). */
export interface ReportForTable {
  model: { name: string; scripted: boolean };
  startedAt: string;
  commit: string;
  settings: { repeat: number; concurrency?: number; split: Split | 'all'; selected: string };
  splits: Partial<Record<Split, SplitSummary>>;
}

/** The line above the results table in docs/eval.md; rows are added at the end of the table under it. */
export const TABLE_MARKER = '<!-- eval results: npm run eval appends a row per split below -->';
export const TABLE_HEADER = [
  '| Date (UTC) | Commit | Model | Split | Repeats | Easy | Medium | Hard | All | s/step model + service: median (mean) | Tokens/step: prompt (reused) / completion |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
];

const num = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const trim = (n: number) => String(Math.round(n * 10) / 10);

/** "5/8" for one repeat; "5.3/8 [5–6]" (mean over the repeats [lowest–highest]) for more; "–" for no task. */
export function passCell(a: Aggregate): string {
  if (!a.tasks) return '–';
  if (a.repeats <= 1) return `${a.passed.max}/${a.tasks}`;
  return `${trim(a.passed.mean)}/${a.tasks} [${a.passed.min}–${a.passed.max}]`;
}

function timeCell(a: Aggregate): string {
  const { model, service } = a.secondsPerStep;
  return `${num(model.median, 2)} + ${num(service.median, 2)} (${num(model.mean, 2)} + ${num(service.mean, 2)})`;
}

const tokensCell = (a: Aggregate) => `${num(a.tokensPerStep.prompt)} (${num(a.tokensPerStep.reused)}) / ${num(a.tokensPerStep.completion)}`;
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');

/** One table row per split of the report, in SPLITS order. */
export function resultRows(report: ReportForTable): string[] {
  const date = report.startedAt.slice(0, 16).replace('T', ' ');
  const selected = report.settings.selected && report.settings.selected !== 'all' ? ` (only ${report.settings.selected.split(',').map((s) => s.trim()).join(', ')})` : '';
  return SPLITS.flatMap((split) => {
    const s = report.splits[split];
    if (!s) return [];
    const cells = [date, report.commit, report.model.name, `${split}${selected}`, `${report.settings.repeat}${(report.settings.concurrency ?? 1) > 1 ? ` (${report.settings.concurrency} at once)` : ''}`, ...TIERS.map((t) => passCell(s.tiers[t])), passCell(s.total), timeCell(s.total), tokensCell(s.total)];
    return [`| ${cells.map(cell).join(' | ')} |`];
  });
}

/**
 * Adds `rows` at the end of the results table of `file` (under TABLE_MARKER); a file without
 * the marker gets it, the header and the rows at its end.
 */
export function appendResultRows(file: string, rows: string[]): void {
  if (!rows.length) return;
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const lines = text.split('\n');
  const marker = lines.indexOf(TABLE_MARKER);
  if (marker < 0) {
    const head = text.length && !text.endsWith('\n') ? `${text}\n` : text;
    fs.writeFileSync(file, `${head}${head ? '\n' : ''}${TABLE_MARKER}\n${[...TABLE_HEADER, ...rows].join('\n')}\n`);
    return;
  }
  let end = marker + 1;
  while (end < lines.length && lines[end].startsWith('|')) end += 1;
  const table = end === marker + 1 ? [...TABLE_HEADER, ...rows] : rows;
  lines.splice(end, 0, ...table);
  fs.writeFileSync(file, lines.join('\n'));
}
