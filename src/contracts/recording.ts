/**
 * A task's recording: the actions performed in it, in order, each with what it acted on
 * described well enough to find it again on a page that changed since. Secrets appear as
 * their placeholders (`<secret>name</secret>`), never as values.
 */

/** How to find an element again; the fields are tried in order, the position last. */
export interface ElementDescription {
  /** ARIA role as the observation names it (button, link, textbox, combobox, checkbox, ...). */
  role: string;
  /** Accessible name (the observation's label). */
  name: string;
  /** Visible text of the element, trimmed (up to 120 characters). */
  text?: string;
  /** Text of the <label> tied to a form field. */
  label?: string;
  placeholder?: string;
  /** data-testid / data-test / data-qa attribute. */
  testId?: string;
  /** `id` attribute, when it does not look generated. */
  id?: string;
  /** `name` attribute of a form field. */
  fieldName?: string;
  tag: string;
  inputType?: string;
  /** A CSS path from the document (or shadow root) to the element. */
  css: string;
  /** The frame the element is in; absent for the main frame. */
  frame?: { url: string; name?: string };
  /** Where the element was in the viewport (CSS pixels), the last resort. */
  box: { x: number; y: number; width: number; height: number };
}

export type RecordedBy = 'agent' | 'human' | 'replay';

export interface RecordedStep {
  /** Place in the task, from 0. */
  seq: number;
  /** The agent chose it, a human did it by hand, or it was replayed from an earlier recording. */
  by: RecordedBy;
  /** The tool (navigate, click_element, input_text, select_option, send_keys, upload_file, scroll, go_back, switch_tab, wait, extract, done, request_human_input) or the manual action (manual_click, manual_double_click, manual_type, manual_key_press). */
  action: string;
  /** The action's arguments as given (element indexes of the moment dropped; secret values as placeholders). */
  args: Record<string, unknown>;
  /** What it acted on, for actions on an element. */
  element?: ElementDescription;
  urlBefore: string;
  urlAfter: string;
  /** ok: performed; failed: tried and failed; blocked: refused by the automation policy. */
  outcome: 'ok' | 'failed' | 'blocked';
  /** The failure or the reason it was blocked. */
  error?: string;
  /** The outcome as the agent was told it (masked). */
  summary?: string;
  /** The agent's words that came with the action. */
  reasoning?: string;
  /** The picture of the viewport after the action (a file of the task's owner), when taken. */
  pictureFileId?: string;
  /** Why the step has no picture, when it has none. */
  pictureSkipped?: PictureSkip;
  at: string;
}

export interface TaskRecording {
  sessionId: string;
  taskId: string;
  /** The task this one replayed, when it was a replay. */
  replayOf?: string;
  steps: RecordedStep[];
}

/** The roles an element is found by (getByRole with its accessible name), in a replay and in the exported Playwright test. */
export const ARIA_ROLES: ReadonlySet<string> = new Set([
  'button', 'checkbox', 'combobox', 'link', 'listbox', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'searchbox', 'slider', 'spinbutton', 'switch', 'tab', 'textbox', 'treeitem', 'gridcell', 'row', 'cell', 'heading', 'img',
]);

/**
 * Why a step has no picture: `unchanged` nothing visible changed since the task's last
 * picture (the one before shows the page); `busy` the worker's CPU was short and pictures
 * were taken every other step; `secret_fields` a field holding a secret could not be
 * covered; `no_page` the page was closed or crashed; `failed` the shot failed or took too
 * long; `quota` the owner's storage quota was full; `not_stored` storing it failed.
 */
export const PICTURE_SKIPS = ['unchanged', 'busy', 'secret_fields', 'no_page', 'failed', 'quota', 'not_stored'] as const;
export type PictureSkip = (typeof PICTURE_SKIPS)[number];
