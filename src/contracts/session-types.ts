/** Plain data shared by the workflow, its activities and the API (no runtime imports). */
import type { SecretEntryInput, TaskParamsInput, TotpSeed } from './schemas/task.schema';
export type { TotpSeed };

export type OutputType = 'text' | 'structured_json' | 'structured_csv';

/**
 * A task's parameters: the output of the API's zod schema (src/api/schemas/task.schema.ts),
 * so there is one definition; `secrets` only when the task has any. Values the agent may
 * type but never sees are kept in the workflow (encrypted payloads) and worker memory only.
 */
export type TaskParams = Omit<TaskParamsInput, 'secrets'> & {
  secrets?: SecretEntry[];
  /** A replay (`replayOf`): the task whose recording is performed, and the first recorded task of its line. */
  replay?: ReplaySource;
};

/** Where a replay's steps come from: `source` is the newest successful recording in the line of the task named by `replayOf`. */
export interface ReplaySource {
  of: string;
  source: string;
  root: string;
}

/** One entry of a task's `secrets`: the fields may be typed on pages whose host `match` covers. */
export type SecretEntry = SecretEntryInput;

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_time: number;
  cost: number;
  /** Sessions on a managed proxy: bytes relayed and their cost (included in `cost`). */
  proxy_bytes?: number;
  proxy_cost?: number;
  /** Replays only: steps performed from the recording, and steps that needed the model. */
  replayed_steps?: number;
  agent_steps?: number;
}

export type TaskStatus = 'running' | 'paused' | 'guardrail_trigger' | 'stopped' | 'task_completed' | 'failed';
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['stopped', 'task_completed', 'failed'];

/** A file the page downloaded during the task (stored by the service). */
export interface TaskFile {
  fileId: string;
  source: string;
  filename: string;
  timestamp: number;
}

/** Requests the task's pages made (bounded, secrets masked). */
export interface TaskNetwork {
  id: string;
  taskId: string;
  urls: { url: string; timestamp: number }[];
}

/** One check of a task's `verify`. */
export type VerifyCheck = { urlMatches: string } | { textVisible: string } | { elementVisible: string } | { criteria: string };

/** A check's verdict on the final page (and the answer, for criteria), with its reason. */
export interface Verdict {
  check: 'urlMatches' | 'textVisible' | 'elementVisible' | 'criteria';
  value: string;
  passed: boolean;
  reason: string;
}

/** A verified task's checks as they stood when it completed. */
export interface Verification {
  passed: boolean;
  /** Times the result was checked (the last one passed). */
  attempts: number;
  checks: Verdict[];
}

export interface TaskView {
  taskId: string;
  /** A replay: the task named by `replayOf`. */
  replayOf?: string;
  /** A replay: the first recorded task of its line (kept with the record, never on the wire). */
  replayRoot?: string;
  sessionId: string;
  status: TaskStatus;
  usage: Usage;
  message?: string;
  error?: string;
  code?: string;
  details?: Record<string, unknown>;
  guardrail?: { type: string; value: string };
  /** A task with `verify`: the verdicts of the checks its result passed. */
  verification?: Verification;
  createdAt: string;
  completedAt?: string;
  /** Stored with the task record by the worker; not kept in the workflow. */
  files?: TaskFile[];
  network?: TaskNetwork[];
}

/** The end of a task as the inline answer reports it. */
export type TaskOutcome = TaskView;

export type SessionStatus = 'pending' | 'active' | 'orphaned' | 'completed' | 'terminated' | 'expired' | 'failed';
export type EndReason = 'completed' | 'terminated' | 'expired' | 'terminateOnCompletion' | 'instance_lost';

export interface SessionView {
  sessionId: string;
  status: SessionStatus;
  workerId?: string;
  currentTaskId?: string;
  endReason?: EndReason;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  /** A human holds the browser (takeOverControl); the agent waits. */
  manual?: boolean;
  /** The session waits for a person without a browser; an answer or a takeover wakes it. */
  hibernated?: boolean;
}

export interface SessionInput {
  sessionId: string;
  userId: string;
  idleTimeoutMs: number;
  /** Price list and model are resolved by the worker; the workflow only carries limits. */
  maxSteps: number;
  /** How long an orphaned session waits for another worker to restore it. */
  orphanGraceMs: number;
  /** A wait for a person longer than this lets the browser go (absent on sessions started before: never). */
  hibernateAfterMs?: number;
  /** An idle session (no task) lets its browser go this long after its last activity (absent: never). */
  idleDiscardMs?: number;
  /** The longest wait for a person; then the session expires. */
  guardrailMaxWaitMs?: number;
  /** The session's upstream proxy (credentials travel only in encrypted payloads). */
  proxy?: SessionProxy;
  /** The environment or profile whose browser profile the session runs on (locked for it by the API). */
  profile?: { kind: 'environment' | 'profile'; id: string; userId: string };
  /** The automation policy every agent action of the session is checked against (read by the worker). */
  policyId?: string;
  initialTask?: { taskId: string; params: TaskParams };
  /** The session exists for its initial task alone (run-task, trigger runs, chat completions): it ends with reason `completed` when that task ends. */
  singleTask?: boolean;
  /** Set when the session's environment may be reached in chat (reachOutMode other than off). */
  reachOut?: { mode: 'guardrail_only' | 'full'; environmentId: string };
  /** State carried over by continue-as-new. */
  carried?: CarriedState;
}

/** An upstream proxy of a session, as the browser worker needs it. */
export interface SessionProxy {
  /** http://[user:pass@]host:port or socks5://[user:pass@]host:port */
  url: string;
  /** `Service` (the operator's pool: metered and charged) or `custom` (the user's, free). */
  source: 'Service' | 'custom';
  level: 'system' | 'chrome';
  country?: string;
  /** USD per byte relayed, for managed proxies. */
  pricePerByte?: number;
}

export interface CarriedState {
  workerId: string;
  taskQueue: string;
  previousTasks: PreviousTask[];
  lastActivityAt: number;
}

/** What a follow-up task is told about the earlier ones (summaries only, history stays small). */
export interface PreviousTask {
  prompt: string;
  status: TaskStatus;
  result: string;
}

/** One agent step as the workflow sees it: a summary, never pages or screenshots. */
export interface StepResult {
  kind: 'continue' | 'done' | 'human_input';
  message?: string;
  success?: boolean;
  /** A done of a task with `verify`: the checks its result passed. */
  verification?: Verification;
  humanInput?: { type: string; value: string };
  usage: { inputTokens: number; outputTokens: number };
  action?: { name: string; target?: string };
  /** Where the step's time went on the worker (for benchmarks and logs). */
  timings?: { observeMs: number; modelMs: number; actMs: number };
  /** The last step already stored the task's downloads and requests. */
  artifactsCollected?: boolean;
  /** Bytes relayed through a managed proxy since the previous step, and their cost (USD, also in `cost`). */
  proxy?: { bytes: number; cost: number };
  /** A replay performed the step from its recording, without the model. */
  replayed?: boolean;
  /** The agent's words that came with the step's action (masked, at most 1,000 characters). */
  said?: string;
}

/** The details of a cancelled agent step: the model tokens it used and their cost (still charged). */
export interface CancelledStep {
  usage: { inputTokens: number; outputTokens: number };
  cost: number;
  /** The agent's words in the step before it was cancelled (masked, clipped), when it had said any. */
  said?: string;
}

export interface StepInput {
  sessionId: string;
  userId: string;
  taskId: string;
  stepNo: number;
  params: TaskParams;
  previousTasks: PreviousTask[];
  humanReply?: string;
  /** The session's environment, whose files the task may upload. */
  environmentId?: string;
  /** What the task's budgets leave; `cost` (USD) only when the task has a maxCost. */
  remaining: { inputTokens: number; outputTokens: number; cost?: number };
  /** What the task's model calls (and managed proxy) cost so far, USD: counted against the owner's daily limit. */
  spentCost?: number;
  /** The session's automation policy. */
  policyId?: string;
  /** The task has secrets (params never carry them to the worker). */
  hasSecrets?: boolean;
  /** The values, handed to a worker once per task (and again when the session moves). */
  secrets?: SecretEntry[];
}

/**
 * What the workflow sends for one agent step. The task's prompt, parameters and previous
 * tasks (up to tens of kilobytes) travel only with the task's first step on a worker, which
 * keeps them for the later steps; a worker that no longer holds them fails the step with
 * TASK_CONTEXT_UNAVAILABLE and the workflow hands them over again. So a long task does not
 * repeat them in the session's history at every step.
 */
export type StepRequest = Omit<StepInput, 'params' | 'previousTasks'> & {
  context?: { params: TaskParams; previousTasks: PreviousTask[] };
};

/** A manual action of the human (coordinates already in page space: y without the 155 px offset). */
export type InteractionAction =
  | { type: 'takeOverControl' }
  | { type: 'releaseControl' }
  | { type: 'CLICK'; x: number; y: number }
  | { type: 'DOUBLE_CLICK'; x: number; y: number }
  | { type: 'TYPE'; text: string; humanLike: boolean }
  | { type: 'KEY_PRESS'; key: string };
