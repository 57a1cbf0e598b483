import type { LlmMessage, LlmToolCall, LlmToolSpec } from './llm/types';
import type { CompiledPolicy } from './policy/policy';
import type { NavigationGuardState } from './policy/navigation-guard';
import type { ReplayPlan } from '../recording/replay';
import type { RecordedStep } from '../contracts/recording';
import type { AgentTool } from './types';
import type { TaskFile, TaskFiles } from '../browser/task-files';
import type { ApprovedElement } from './approval-binding';
import type { EmptyField, UnchosenField } from './form-fields';
import type { PlannedValue } from './form-plan';
import type { ExtremeNamed } from './observe/price-extreme';
import { PressCounter, RepetitionGuard, TurnTaking } from './repetition';
import { SetControls, SpentTools } from './page-bound-tools';
import { BackAndForth } from './back-and-forth';
import { SeenFigures } from './seen-figures';
import { fitHistory } from './context-budget';

/** The conversation is trimmed once it holds more messages than this. */
const KEEP_MESSAGES = 40;

/** An action waiting for the human's approval (its tool call is answered once they do). */
export interface PendingApproval {
  callId: string;
  tool: string;
  args: unknown;
  element?: ApprovedElement;
}

/** An action of the model's answer not performed yet: it is performed at a later step, without a model call. */
export interface ListedAction {
  tool: AgentTool;
  args: unknown;
  callId: string;
}

/** The rest of an answer that carried several actions, and the page they were chosen on. */
export interface ActionList {
  actions: ListedAction[];
  /** The observation the model chose them from. */
  basis: string;
  /** The elements the list acted on so far (their values may change). */
  acted: number[];
  /** The last action of the list performed, for the model's answer. */
  last: string;
}

/** A task's conversation and pending approval, saved when its session hibernates (pictures left out). */
export interface SavedMemory {
  taskId: string;
  messages: LlmMessage[];
  pendingApproval?: PendingApproval;
}

/**
 * Actions held back in a row (holds are for a model that follows the schemas) after which it may
 * only call done (or ask a person what only a person can give), and is told so. Each hold says
 * what to do instead, often "call done"; the default model, its Green Mug in the cart, pressed
 * the White and the Green Mug's buttons in turn, each press held, 18 times, until its steps ran
 * out.
 */
export const HOLDS_BEFORE_ONLY_DONE = 4;
/** The note when HOLDS_BEFORE_ONLY_DONE actions were held in a row. */
export const ONLY_DONE_NOTE = `Note: your last ${HOLDS_BEFORE_ONLY_DONE} actions were held back and none was performed. Call done now: with the answer if the page shows the task complete, else with success=false and what stands in the way (or request_human_input for what only a person can give).`;

/** A replayed task: its plan, how far it got, and whether the agent has taken over. */
export class ReplayProgress {
  /** The next recorded step to perform. */
  private cursor = 0;
  /** The agent has taken over: no more recorded steps are performed. */
  off = false;
  /** One line for each recorded step performed again. */
  readonly done: string[] = [];

  constructor(readonly plan: ReplayPlan) {}

  /** The recorded step to perform next, if any is left. */
  get nextStep(): RecordedStep | undefined {
    return this.plan.steps[this.cursor];
  }

  /** The recorded steps not performed again. */
  get remaining(): RecordedStep[] {
    return this.plan.steps.slice(this.cursor);
  }

  /** The next recorded step was performed again, as `line` says. */
  stepReplayed(line: string): void {
    this.cursor += 1;
    this.done.push(line);
  }

  /** No more recorded steps: the model goes on from here. */
  stop(): void {
    this.off = true;
  }
}

/**
 * What the agent remembers of a session on this worker: the conversation with the model
 * (across the session's tasks) and the state of the task it is on.
 */
export class TaskMemory {
  /** The task the conversation is on; another worker restoring the session starts without one. */
  taskId?: string;
  files?: TaskFiles;
  /** The conversation, in the order the model reads it. */
  readonly messages: LlmMessage[] = [];
  /**
   * Whether there is something to weigh before the model's next answer: a new task (its plan:
   * the model once typed a code the task said to ask for), or the service answered its last
   * actions with more than what they did (an action held, refused or failed, a note, a press
   * that changed nothing, a human's reply). The next answer then begins with a thought;
   * without it the local model lists its actions alone (LLM_THOUGHT=feedback).
   */
  feedback = false;
  /** The tools as the model sees them for this task (done carries the output format). */
  specs?: LlmToolSpec[];
  /** The session's automation policy, read once per task. */
  policy?: CompiledPolicy | null;
  /** The domain rules' guard on the session's browser context, when the policy restricts domains. */
  guard?: NavigationGuardState;
  replay?: ReplayProgress;
  /** The next model call may only finish the task (the answer of a replayed task). */
  answerOnly = false;
  /** The same action chosen again on an unchanged page, counted. */
  readonly repetition = new RepetitionGuard();
  /** The same state-changing action on the same element repeated while the page changes, counted. */
  readonly presses = new PressCounter();
  /** Page tools (wait, extract, navigate...) already performed on the page as it is. */
  readonly spent = new SpentTools();
  /** The fields typed into and boxes pressed, per page (not offered again while they stay as set). */
  readonly set = new SetControls();
  /** The pages reached in order and where each press led: going back and forth between two. */
  readonly pages = new BackAndForth();
  /** The numbers of the task's pages, tool results and prompt (a done's amounts are held against them). */
  readonly figures = new SeenFigures();
  /** The latest observation's text (what an index refers to). */
  lastObservation?: string;
  /** The token budget the latest observation was composed within. */
  observationBudget?: number;
  /** The elements acted on since the latest observation (what the next one says about them). */
  acted: number[] = [];
  /** Said to the model with the next observation. */
  notes: string[] = [];
  /** Actions of the model's last answer still to perform. */
  list?: ActionList;
  /** A failed action of this run of failures was answered with the tool that fits. */
  toldRightTool = false;
  /** The fields filled since the last press, click or navigation (a done then is checked). */
  unsubmitted: number[] = [];
  /** A field was filled in this task. */
  formTouched = false;
  /** What the agent typed into fields and chose in lists in this task (task-values.ts). */
  typed: string[] = [];
  /** The text last typed into each field in this task, by index (done-check.ts). */
  readonly typedInto = new Map<number, string>();
  /** Fields a typing of the text they hold was held for in this task (done-check.ts). */
  readonly retypeHeld = new Set<number>();
  /** The last action pressed a button, a link or Enter after fields were filled. */
  pressedAfterFilling = false;
  /** A done was answered with what the page shows once in this task (a form unsent, a field refused). */
  doneQuestioned = false;
  /** A done was answered once in this task for a value the task gives never typed. */
  untypedQuestioned = false;
  /** A done was answered once for amounts no page of the task showed. */
  figuresQuestioned = false;
  /** The forms a press was held back for, with what stood against them (fields empty, choices not as the task says): each held once per task (submit-check.ts). */
  readonly formsHeld = new Set<string>();
  /** The latest action was held back, not performed. */
  held = false;
  /** The last press held back (its form's empty fields), until a press, Enter or navigation is performed. */
  heldForm?: { button?: number; empty: EmptyField[]; unchosen: UnchosenField[]; given?: string[]; files?: TaskFile[]; plan?: PlannedValue[] };
  /** The buttons that add or buy whose second press in a row was held once in this task (repetition.ts). */
  readonly repeatsHeld = new Set<string>();
  /** A done on a page the form's send opened, that shows what the task still names, was answered once in this task (done-check.ts). */
  stillNamedQuestioned = false;
  /** The line of the page a sent form led to that turned it down, and that page's address (done-check.ts refusalLine). */
  refusal?: { url: string; line: string };
  /** A done on that page was answered with it (once per task). */
  refusalQuestioned = false;
  /** A done on another page of a list than the one the task names was answered once in this task (done-check.ts). */
  listPageQuestioned = false;
  /** Presses of two elements in turn (repetition.ts). */
  readonly turns = new TurnTaking();
  /** The cart buttons pressed in this task, each with the observation of its latest press, and the last one held, at which step (repetition.ts). */
  readonly cartPresses = new Map<string, string>();
  cartHeld?: { element: string; at: number };
  /** A navigate away from a filled form not sent was held once in this task (done-check.ts). */
  leaveHeld = false;
  /** What the note of the fields the task gives values for, closing the latest observation, said to type and choose; set at each (form-plan.ts). */
  fillPlan?: string;
  /** A leave of a page whose fields the task gives values for, none typed, was held once in this task (act.ts). */
  planLeaveHeld = false;
  /** A link to a part of a page shown whole was held once in this task (done-check.ts). */
  jumpHeld = false;
  /** The toggles the task names, set as it asks, of the form the last press sent (`"Personalised ads" off (unchecked)`; '' for none), while the page it opened stays (toggle-asked.ts). */
  sentWith?: string;
  /** A leave of the page a form was sent to with its toggles as asked was held once in this task (toggle-asked.ts). */
  sentLeaveHeld = false;
  /** The elements the notes of the latest observation tell to press ("press [3] button "Later dates""): not held for the agent's words. */
  advisedPresses = new Set<number>();
  /** The elements pressed (and not held) since the latest observation. */
  pressedNow: number[] = [];
  /** Elements whose press changed nothing visible, with the page as it then was: not offered to a model that follows the schemas while it looks the same. */
  idlePresses?: { page: string; indexes: number[] };
  /** Tabs a switch from which changed nothing visible (they show the page of the active tab), with the page as it then was (which tab is active left out): not offered to switch_tab while it looks the same. */
  sameTabs?: { page: string; indexes: number[] };
  /** The text the last extract read, until the observation after it (its lines the task asks about are quoted there). */
  extracted?: string;
  /** The address of the tab whose go_back found no earlier page (go_back is not offered while the tab shows it). */
  noEarlierPageAt?: string;
  /** What the last observation's note of the cheapest (most expensive) line named (price-extreme.ts). */
  extremeNamed?: ExtremeNamed;
  /** A done was answered once for a press held back and not made since. */
  heldFormQuestioned = false;
  /** Elements a model that follows the schemas may not press in its next answer: the button whose press was just held (submit-check.ts). */
  readonly pressesOffNextAnswer = new Set<number>();
  /** Tools a model that follows the schemas may not call in its next answer: done just after a done was answered with what stands against it, request_human_input after a question was held. */
  readonly offNextAnswer = new Set<string>();
  /** What the service said of the latest action it held (the agent's words that copy it are not its own). */
  lastHeld?: string;
  /** Questions to the human held in this task (question-check.ts: the agent's own work is held twice). */
  questionsHeld = 0;
  /** Actions held back in a row, none performed since: at HOLDS_BEFORE_ONLY_DONE only done is offered next. */
  heldInRow = 0;
  /** Presses held because the agent's words named another element: "4>2" (index-check.ts). */
  readonly misindexHeld = new Set<string>();
  /** An action away from a page that shows the answer the agent's words gave was held in this task (stated-answer.ts). */
  statedHeld = false;
  /** The page lines those holds quoted: held once per line, twice a task at most. */
  readonly statedLines = new Set<string>();
  /** The page in view is the one opened from the cheapest (dearest) line, as the note said: its amount and end ("€4.75, the lowest price of the page before"). */
  extremePage?: string;
  /** A leave of a page that showed what the task asks about was held once in this task (act.ts). */
  shownHeld = false;
  /** An early give-up was answered in this task (give-up.ts). */
  giveUpHeld = false;
  /** A done that repeated the task's words was answered in this task (done-check.ts). */
  echoQuestioned = false;
  /** A done with an empty result while the page showed a table's rows was answered in this task (done-check.ts). */
  emptyQuestioned = false;
  private pendingApproval?: PendingApproval;
  private failedActions = 0;
  private outputCorrections = 0;
  private failedVerifications = 0;

  /** The task's conversation and pending approval, to go on elsewhere. */
  save(): SavedMemory | undefined {
    if (!this.taskId) return undefined;
    const messages = this.messages.map((m) => (m.role === 'user' && m.image ? { role: m.role, content: m.content } : m));
    return { taskId: this.taskId, messages, ...(this.pendingApproval ? { pendingApproval: this.pendingApproval } : {}) };
  }

  /** Goes on from a saved conversation (the task begun again on this worker). */
  restore(saved: SavedMemory): void {
    this.messages.splice(0, this.messages.length, ...saved.messages);
    this.pendingApproval = saved.pendingApproval;
    // The figures the conversation still holds (earlier observations are markers by now).
    for (const m of saved.messages) if (typeof m.content === 'string') this.figures.saw(m.content);
  }

  /** Starts on a new task: its counters from zero, its tools as the model will see them. */
  startTask(taskId: string, specs: LlmToolSpec[]): void {
    this.taskId = taskId;
    this.resetDoneQuestions();
    this.failedActions = 0;
    this.outputCorrections = 0;
    this.failedVerifications = 0;
    this.repetition.reset();
    this.presses.reset();
    this.spent.reset();
    this.set.reset();
    this.pages.reset();
    this.figures.reset();
    this.formsHeld.clear();
    this.held = false;
    this.heldForm = undefined;
    this.leaveHeld = false;
    this.planLeaveHeld = false;
    this.jumpHeld = false;
    this.sentWith = undefined;
    this.sentLeaveHeld = false;
    this.extremeNamed = undefined;
    this.noEarlierPageAt = undefined;
    this.extracted = undefined;
    this.pressedNow = [];
    this.idlePresses = undefined;
    this.sameTabs = undefined;
    this.advisedPresses = new Set();
    this.repeatsHeld.clear();
    this.refusal = undefined;
    this.turns.reset();
    this.cartPresses.clear();
    this.cartHeld = undefined;
    this.offNextAnswer.clear();
    this.pressesOffNextAnswer.clear();
    this.questionsHeld = 0;
    this.heldInRow = 0;
    this.misindexHeld.clear();
    this.statedHeld = false;
    this.statedLines.clear();
    this.shownHeld = false;
    this.extremePage = undefined;
    this.giveUpHeld = false;
    this.specs = specs;
    this.notes = [];
    this.acted = [];
    this.toldRightTool = false;
    this.unsubmitted = [];
    this.formTouched = false;
    this.typed = [];
    this.typedInto.clear();
    this.retypeHeld.clear();
    this.pressedAfterFilling = false;
  }

  /** A new task's done answered with nothing yet. */
  private resetDoneQuestions(): void {
    this.figuresQuestioned = false;
    this.heldFormQuestioned = false;
    this.stillNamedQuestioned = false;
    this.refusalQuestioned = false;
    this.listPageQuestioned = false;
    this.echoQuestioned = false;
    this.emptyQuestioned = false;
    this.doneQuestioned = false;
    this.untypedQuestioned = false;
  }

  /** A user message: what the model is told (`feedback`: something for it to weigh, not only the task). */
  tell(content: string, feedback = true): void {
    this.feedback ||= feedback;
    this.messages.push({ role: 'user', content });
  }

  /**
   * The answer to one of the model's tool calls; `fromPage` for what a tool read or did on the page (its figures
   * count as seen); `feedback` when it is something for the model to weigh (by default anything
   * but what was done). The service's own notes do not count as seen: a hold that quoted the
   * agent's words "invoice #1025 as €455.95" made that amount seen on a line of #1025.
   */
  answerCall(toolCallId: string, content: string, fromPage = false, feedback = !fromPage): void {
    if (fromPage) this.figures.saw(content);
    this.feedback ||= feedback;
    this.messages.push({ role: 'tool', toolCallId, content });
  }

  /** What the model answered: its words and its tool calls. */
  addModelReply(text: string, toolCalls: LlmToolCall[]): void {
    this.feedback = false;
    this.messages.push({ role: 'assistant', content: text, toolCalls: toolCalls.length ? toolCalls : undefined });
  }

  /** The page as it is now; older observations are replaced by a marker (only the latest page state matters). */
  addObservation(text: string, content: string, image: string | undefined): void {
    compactObservations(this.messages);
    this.figures.saw(text);
    this.lastObservation = text;
    this.acted = [];
    this.pressedNow = [];
    this.notes = [];
    this.messages.push({ role: 'user', content, image });
  }

  /** The actions of the list not performed are answered with why, and the list is let go (`feedback`: see answerCall). */
  dropList(reason: string, feedback = true): void {
    const list = this.list;
    this.list = undefined;
    for (const action of list?.actions ?? []) this.answerCall(action.callId, `Not performed: ${reason}`, false, feedback);
  }

  /** The latest task prompt of the conversation. */
  currentTaskPrompt(): LlmMessage | undefined {
    return [...this.messages].reverse().find((message) => message.role === 'user' && message.content.includes('New task:'));
  }

  /** Drops what the context cannot hold (context-budget.ts). */
  fitToContext(contextTokens: number, fixedTokens: number): void {
    fitHistory(this.messages, contextTokens, fixedTokens);
  }

  /** The conversation's size in tokens, roughly (a screenshot counts as 4,000 characters). */
  estimatedTokens(): number {
    let chars = 0;
    for (const message of this.messages) {
      chars += message.content.length;
      if (message.role === 'assistant' && message.toolCalls) for (const call of message.toolCalls) chars += call.arguments.length + call.name.length;
      if (message.role === 'user' && message.image) chars += 4000;
    }
    return Math.ceil(chars / 4);
  }

  /** Keeps the task prompts and the recent turns of a long conversation. */
  trimHistory(): void {
    if (this.messages.length > KEEP_MESSAGES) trimHistory(this.messages);
  }

  awaitApproval(pending: PendingApproval): void {
    this.pendingApproval = pending;
  }

  /** The action waiting for approval, no longer waiting. */
  takePendingApproval(): PendingApproval | undefined {
    const pending = this.pendingApproval;
    this.pendingApproval = undefined;
    return pending;
  }

  /** A tool call left waiting for approval is answered, so the conversation stays well-formed. */
  answerPendingApproval(content: string): void {
    if (!this.pendingApproval) return;
    this.answerCall(this.pendingApproval.callId, content);
    this.pendingApproval = undefined;
  }

  /** Actions failed or blocked in a row, up to now. */
  get failuresInRow(): number {
    return this.failedActions;
  }

  /** An action performed: the count of failures in a row starts again. */
  actionSucceeded(): void {
    this.failedActions = 0;
    this.toldRightTool = false;
  }

  /** An action failed or was blocked: how many in a row now. */
  actionFailed(): number {
    this.failedActions += 1;
    return this.failedActions;
  }

  /** A structured result was refused: how many times in this task now. */
  /** How many of this task's answers failed their verify checks. */
  verificationFailures(): number {
    return this.failedVerifications;
  }

  /** A done whose result failed its verify checks; how many so far in this task. */
  verificationFailed(): number {
    this.failedVerifications += 1;
    return this.failedVerifications;
  }

  outputRefused(): number {
    this.outputCorrections += 1;
    return this.outputCorrections;
  }

  startReplay(plan: ReplayPlan): void {
    this.replay = new ReplayProgress(plan);
  }

  /** A new task replays nothing until it says so. */
  clearReplay(): void {
    this.replay = undefined;
    this.answerOnly = false;
  }

  /** The task replays a recording and the agent has not taken over. */
  get replaying(): boolean {
    return !!this.replay && !this.replay.off;
  }
}

/** Older observations are replaced by a marker: only the latest page state matters. */
function compactObservations(messages: LlmMessage[]): void {
  for (const message of messages) {
    if (message.role === 'user' && message.content.startsWith('Observation (step ') && !message.content.endsWith('[omitted]')) {
      message.content = `${message.content.split('\n')[0]} [omitted]`;
      delete message.image;
    }
  }
}

/** Keeps the task prompts and the recent turns, cutting at a user message so tool calls stay paired. */
function trimHistory(messages: LlmMessage[]): void {
  const cutFrom = messages.length - KEEP_MESSAGES / 2;
  let cut = cutFrom;
  while (cut < messages.length && messages[cut].role !== 'user') cut++;
  const prompts = messages.slice(0, cut).filter((message) => message.role === 'user' && message.content.includes('New task:'));
  messages.splice(0, messages.length, ...prompts.slice(-3), ...messages.slice(cut));
}
