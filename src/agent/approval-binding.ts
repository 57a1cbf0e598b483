import { describeElement, elementName } from './observe/element-info';
import { resolveElementIn } from './observe/resolve';
import { describeForRecording } from '../recording/describe';
import type { ElementDescription } from '../contracts/recording';
import type { ToolContext } from './types';
import { abortable } from './tools/abort';

/**
 * The element an approval was asked about, as the recording's element finder describes it:
 * when the approval comes, the action is performed only if the element under the index is
 * still that one (a page could move its marker while the human reads the question).
 */
export interface ApprovedElement {
  index: number;
  /** `button "Pay now"`: how the model and the human were told. */
  shown: string;
  /** What identifies it: role, name, text, attributes, CSS path and frame (not its position). */
  identity: string;
}

/** The element of an action that names an index, or undefined (no index, or nothing there). */
export async function elementUnderIndex(ctx: ToolContext, args: unknown): Promise<ApprovedElement | undefined> {
  const index = (args as { index?: unknown } | null)?.index;
  if (typeof index !== 'number') return undefined;
  try {
    const { locator, frame } = await abortable(resolveElementIn(ctx.page, index), ctx.signal);
    const info = await abortable(describeElement(locator), ctx.signal);
    const desc = await abortable(describeForRecording(locator, frame, info), ctx.signal);
    return { index, shown: elementName(info), identity: identityOf(desc, info.role, info.label) };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return undefined;
  }
}

function identityOf(desc: ElementDescription | undefined, role: string, label: string): string {
  if (!desc) return JSON.stringify({ role, label });
  const { box: _position, ...rest } = desc as ElementDescription & { box?: unknown };
  return JSON.stringify(rest, Object.keys(rest).sort());
}

/** Why the approved action must not be performed now, or null when the element is still the one approved. */
export async function approvalMoved(ctx: ToolContext, approved: ApprovedElement | undefined, args: unknown): Promise<string | null> {
  if (!approved) return null;
  const now = await elementUnderIndex(ctx, args);
  if (!now) return `the element [${approved.index}] the human approved (${approved.shown}) is no longer on the page`;
  if (now.identity !== approved.identity) return `the element [${approved.index}] is no longer the one the human approved (${approved.shown}); it is now ${now.shown}`;
  return null;
}
