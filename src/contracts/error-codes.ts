/**
 * The catalogue of the service's error codes: each code's HTTP status and whether another
 * try can mend it. The API's error envelope, the activities' Temporal failures, the
 * workflows' non-retryable lists and the trigger runs' retry decisions all read it.
 * Pure data: workflow code imports it too.
 *
 * `retry`:
 * - `now`   transient; the same call, repeated after a short backoff, may succeed
 *           (Temporal retries the activity).
 * - `later` the call failed for good, but a fresh attempt later may succeed (a trigger
 *           runs again under its retryPolicy; a client may start again).
 * - `never` only a change by the user or the operator mends it (input, account,
 *           balance, a missing resource, a policy); nothing retries it.
 */
export type RetryClass = 'now' | 'later' | 'never';

export interface ErrorSpec {
  readonly status: number;
  readonly retry: RetryClass;
  /** A failure of an action that ends the task at once, instead of being told to the model to try something else. */
  readonly endsTask?: true;
}

const spec = (status: number, retry: RetryClass, endsTask?: 'ends the task'): ErrorSpec => ({ status, retry, ...(endsTask ? { endsTask: true as const } : {}) });

export const ERROR_CATALOGUE = {
  // Request validation
  INVALID_PARAMS: spec(400, 'never'),
  INVALID_PARAMETER: spec(400, 'never'),
  MISSING_REQUIRED_FIELD: spec(400, 'never'),
  INVALID_TASK_DETAILS: spec(400, 'never'),
  /** replayOf names a task that did not complete (its recording is not one to repeat). */
  INVALID_REPLAY: spec(400, 'never'),
  INVALID_FILE_TYPE: spec(400, 'never'),
  INVALID_ARCHIVE: spec(400, 'never'),
  UPLOAD_ABORTED: spec(400, 'later'),
  PAYLOAD_TOO_LARGE: spec(413, 'never'),
  UNSUPPORTED_MEDIA_TYPE: spec(415, 'never'),
  METHOD_NOT_ALLOWED: spec(405, 'never'),
  NOT_FOUND: spec(404, 'never'),

  // Authentication and account
  UNAUTHORIZED: spec(401, 'never'),
  INVALID_API_KEY: spec(401, 'never'),
  API_KEY_EXPIRED: spec(401, 'never'),
  AUTHENTICATION_ERROR: spec(500, 'now'),
  ACCOUNT_DEACTIVATED: spec(403, 'never'),
  USER_NOT_FOUND: spec(404, 'never'),
  INSUFFICIENT_BALANCE: spec(402, 'never'),
  PAYMENT_FAILED: spec(402, 'never'),

  // Limits
  RATE_LIMIT_EXCEEDED: spec(429, 'later'),
  SESSION_LIMIT_REACHED: spec(429, 'later'),
  TOO_MANY_VIEWERS: spec(429, 'later'),
  TOO_MANY_CONNECTIONS: spec(429, 'later'),
  TOO_MANY_REPLAYS: spec(429, 'later'),
  /** A reconnecting socket asked for more missed events than are replayed; it reads the rest over HTTP. */
  REPLAY_TRUNCATED: spec(413, 'never'),
  ENVIRONMENT_LIMIT_REACHED: spec(400, 'never'),
  PROFILE_LIMIT_REACHED: spec(400, 'never'),
  POLICY_LIMIT_REACHED: spec(400, 'never'),
  CRON_JOB_LIMIT_REACHED: spec(400, 'never'),
  STORAGE_QUOTA_EXCEEDED: spec(413, 'never'),

  // Sessions and instances
  SESSION_NOT_FOUND: spec(404, 'never'),
  SESSION_EXPIRED: spec(404, 'never'),
  SESSION_NOT_READY: spec(409, 'later'),
  SESSION_FAILED: spec(500, 'later'),
  INSTANCE_UNAVAILABLE: spec(503, 'later'),
  NO_INSTANCES_AVAILABLE: spec(503, 'now'),
  INSTANCE_LOST: spec(503, 'later'),
  SERVICE_OVERLOADED: spec(503, 'now'),
  /** The user's own proxy cannot be used (it may come back: a trigger tries again later). */
  PROXY_CONNECTION_FAILED: spec(400, 'later'),
  /** A proxy of the operator's pool cannot be used. */
  MANAGED_PROXY_UNAVAILABLE: spec(503, 'later'),
  PROFILES_UNAVAILABLE: spec(503, 'later'),
  SECRETS_UNAVAILABLE: spec(503, 'later'),
  TASK_CONTEXT_UNAVAILABLE: spec(503, 'later'),
  WEBRTC_ERROR: spec(500, 'later'),

  // Tasks and the session workflow's rejections
  TASK_NOT_FOUND: spec(404, 'never'),
  TASK_ALREADY_RUNNING: spec(409, 'later'),
  NO_TASK_RUNNING: spec(409, 'never'),
  INVALID_STATE: spec(409, 'never'),
  /** A trigger paused that is not active, or resumed that is not paused: 400, as the contract gives it. */
  INVALID_JOB_STATE: spec(400, 'never'),
  NO_GUARDRAIL_PENDING: spec(409, 'never'),
  TASK_FAILED: spec(500, 'later'),
  TASK_TIMEOUT: spec(500, 'later'),
  TASK_STOPPED: spec(500, 'later'),
  MAX_STEPS_REACHED: spec(500, 'later'),
  /** The agent kept repeating one action on a page it did not change, after being told. */
  TASK_LOOP_DETECTED: spec(500, 'later'),
  TOKEN_BUDGET_EXCEEDED: spec(500, 'later'),
  /** The next model call would pass the task's maxCost, its owner's daily spending limit or balance (another run meets the same budget). */
  TASK_BUDGET_EXCEEDED: spec(402, 'never'),
  /** The result did not pass the task's verify checks after the agent was told which failed, a few times. */
  TASK_NOT_VERIFIED: spec(500, 'later', 'ends the task'),
  /** Nobody answered the task's question to a person within GUARDRAIL_MAX_WAIT_MS: the session expired. */
  HUMAN_WAIT_EXPIRED: spec(408, 'later'),
  INVALID_STRUCTURED_OUTPUT: spec(500, 'later', 'ends the task'),
  ACTION_FAILED: spec(500, 'later'),

  // The browser
  NAVIGATION_TIMEOUT: spec(500, 'later', 'ends the task'),
  NAVIGATION_BLOCKED: spec(500, 'never'),
  PAGE_CRASH: spec(500, 'later', 'ends the task'),
  ELEMENT_NOT_FOUND: spec(500, 'later'),

  // The model provider
  /** The provider failed (HTTP 5xx, 408, 409): another call soon may succeed. */
  LLM_ERROR: spec(502, 'now'),
  /** The model call failed in a way the provider did not explain (not an HTTP answer). */
  LLM_REQUEST_FAILED: spec(502, 'later'),
  LLM_UNAVAILABLE: spec(503, 'now'),
  /** The provider is throttling requests (HTTP 429). */
  LLM_RATE_LIMITED: spec(503, 'now'),
  /** The provider account has no credit or quota left (HTTP 402, or 429 insufficient_quota). */
  LLM_QUOTA_EXCEEDED: spec(503, 'later'),
  LLM_AUTH_FAILED: spec(502, 'never'),
  LLM_BAD_REQUEST: spec(502, 'never'),
  LLM_INVALID_RESPONSE: spec(502, 'later'),

  // Resources
  ENVIRONMENT_NOT_FOUND: spec(404, 'never'),
  PROFILE_NOT_FOUND: spec(404, 'never'),
  PROFILE_EMPTY: spec(404, 'never'),
  PROFILE_IN_USE: spec(409, 'later'),
  UPLOAD_IN_PROGRESS: spec(409, 'later'),
  POLICY_NOT_FOUND: spec(404, 'never'),
  POLICY_IN_USE: spec(409, 'never'),
  POLICY_BLOCKED: spec(403, 'never'),
  FILE_NOT_FOUND: spec(404, 'never'),
  BLOB_NOT_FOUND: spec(404, 'never'),
  BLOB_CORRUPT: spec(500, 'never'),
  CHAT_NOT_FOUND: spec(404, 'never'),

  // Triggers and deliveries
  CRON_JOB_NOT_FOUND: spec(404, 'never'),
  RUN_NOT_FOUND: spec(404, 'never'),
  RUN_FAILED: spec(500, 'later'),
  RUN_TIMEOUT: spec(500, 'later'),
  RUN_OVERLAP: spec(409, 'later'),
  RUN_ABANDONED: spec(500, 'later'),
  WEBHOOK_FAILED: spec(502, 'now'),
  WEBHOOK_REFUSED: spec(502, 'never'),
  CHAT_FAILED: spec(502, 'now'),
  CHAT_REFUSED: spec(502, 'never'),
  CHAT_NOT_CONNECTED: spec(409, 'never'),
  DELIVERY_OUTCOME_MISSING: spec(500, 'now'),

  INTERNAL_ERROR: spec(500, 'now'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && Object.hasOwn(ERROR_CATALOGUE, code);

/** The code's HTTP status; an unknown code (from outside the catalogue) is a server error. */
export const statusOf = (code: string): number => (isErrorCode(code) ? ERROR_CATALOGUE[code].status : 500);

/** How another try could mend the code; an unknown code may be mended by a later attempt. */
export const retryOf = (code: string): RetryClass => (isErrorCode(code) ? ERROR_CATALOGUE[code].retry : 'later');

/** Whether a fresh attempt later (a trigger run's next attempt) could succeed. */
export const canRetryLater = (code: string): boolean => retryOf(code) !== 'never';

/** Whether Temporal should retry an activity that failed with the code. */
export const canRetryNow = (code: string): boolean => retryOf(code) === 'now';

/** Failure types Temporal must not retry: every code a repeated call cannot mend. */
export const NON_RETRYABLE_ERROR_TYPES: readonly ErrorCode[] = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((c) => !canRetryNow(c));

/** Whether an action failing with this code ends the task at once (the model is not asked to try another way). */
export const endsTaskAtOnce = (code: string): boolean => isErrorCode(code) && ERROR_CATALOGUE[code].endsTask === true;
