import { z } from 'zod';
import os from 'node:os';
import path from 'node:path';
import { parseAllowlist } from './contracts/address-policy';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);
const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `must be a URL with one of the protocols ${protocols.join(', ')}`);

/** A setting whose value is JSON, checked against `schema`. */
const jsonSetting = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

/** Token prices in USD per million tokens, keyed by model name ("*" is the fallback). */
const pricesSchema = jsonSetting(z.record(z.string(), z.object({ input: z.number().min(0), output: z.number().min(0) })));

const chatBaseUrlsSchema = jsonSetting(z.object({ telegram: z.url(), slack: z.url(), discord: z.url(), whatsapp: z.url() }).partial().strict());

/** Every setting of the service, read once at boot from the environment. */
/** FILE_MAX_BYTES unless configured: the largest uploaded file and captured download. */
export const DEFAULT_FILE_MAX_BYTES = 50 * 1024 * 1024;

export const configSchema = z.object({
  ROLE: z.enum(['all', 'api', 'worker', 'workflows', 'model']).default('all').describe('Which parts this process runs (model: the local model server of LLM_PROVIDER=local)'),
  PORT: int(3000, 0, 65535).describe('HTTP port of the API'),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_BASE_URL: url(['http:', 'https:']).optional().describe('Base URL clients use; defaults to http://localhost:PORT'),
  MONGODB_URL: url(['mongodb:', 'mongodb+srv:']).default('mongodb://127.0.0.1:27018/browser_agent'),
  REDIS_URL: url(['redis:', 'rediss:']).default('redis://127.0.0.1:6390'),
  TEMPORAL_ADDRESS: z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port').default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('browser-agent'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('sessions').describe('Shared queue of session workflows'),
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  CHROMIUM_HEADLESS: bool.default(true),
  LLM_PROVIDER: z
    .enum(['openai', 'anthropic', 'local'])
    .optional()
    .describe('openai (and OpenAI-compatible servers via LLM_BASE_URL), anthropic, or local (a GGUF model run by the model role); local when neither LLM_BASE_URL nor LLM_API_KEY is set'),
  LLM_BASE_URL: url(['http:', 'https:']).optional(),
  LLM_API_KEY: z.string().default(''),
  LLM_MODEL: z.string().min(1).optional().describe('The model name; with LLM_PROVIDER=local a GGUF file path (or an hf: URI), the packaged default when unset'),
  LOCAL_MODEL_URL: url(['http:', 'https:']).optional().describe('Where workers reach the local model server (LLM_PROVIDER=local); http://127.0.0.1:MODEL_PORT/v1 by default'),
  MODEL_HOST: z.string().default('127.0.0.1').describe('Address the model role listens on (loopback by default)'),
  MODEL_PORT: int(3090, 1, 65535).describe('Port of the model role'),
  MODEL_API_KEY: z.string().min(16).optional().describe('Key the model role asks every caller for (as a bearer token) and workers send it; required when MODEL_HOST is not loopback. `npm start` generates one'),
  LLM_PREDICTOR: z.enum(['none', 'lookup', 'draft', 'answer', 'copy']).default('answer').describe("How the local model's next tokens are guessed ahead and checked in one pass: answer (what the answer's grammar leaves: keys, brackets, the rest of a name once its start is unique), copy (answer, and in the model's own text the run of the prompt it is copying), lookup (copies runs of the prompt), draft (a smaller model of the same vocabulary, LLM_DRAFT_MODEL), none. The answer is the same"),
  LLM_DRAFT_MODEL: z.string().min(1).optional().describe('GGUF file of the draft model (LLM_PREDICTOR=draft)'),
  LLM_THOUGHT_CHARS: int(240, 0, 500).describe("Bound of the local model's thought before its actions, in characters (0: no thought)"),
  LLM_THOUGHT: z.enum(['always', 'feedback']).default('feedback').describe("When the local model writes its thought before its actions: always, or feedback (at a new task, and when the service answered its last actions with something to weigh: an action held, refused or failed, a note, a press that changed nothing, a human's reply; else the actions alone)"),
  LLM_MAX_ACTIONS: int(4, 1, 10).describe('Actions one answer of the local model may list (the fields of a form, then its submit)'),
  LLM_THREADS: int(0, 0, 256).describe('CPU threads of the local model (0: all cores)'),
  LLM_CONTEXT_SIZE: int(8192, 512, 131072).describe('Context window of the local model, in tokens (each of its LLM_SEQUENCES)'),
  LLM_SEQUENCES: int(2, 1, 16).describe('Conversations the local model keeps evaluated at once (tasks beyond that re-evaluate their prompt)'),
  LLM_CONTEXT_TOKENS: int(0, 0).describe("The agent's prompt budget in tokens (system, tools, history and observation); 0: LLM_CONTEXT_SIZE less the answer's room with the local model, 100000 otherwise"),
  LLM_VISION: bool.default(false).describe('Send a screenshot with each observation'),
  STEP_PICTURES: bool.default(true).describe("A JPEG of the page after each recorded step, 640 px wide, shown on the task's record page; a step that changed nothing visible has none"),
  STEP_PICTURES_LOAD_LIMIT: z.coerce.number().positive().default(1.2).describe("Load average per core above which a task's steps get a picture every other step (the recording says `busy` for the others)"),
  STEP_PICTURES_BUSY_CPU: z.coerce.number().gt(0).lte(1).default(0.85).describe("Share of the machine's CPU busy over the last 3 s above which a task's steps get a picture every other step (the recording says `busy` for the others)"),
  LLM_MAX_RETRIES: int(2, 0, 10),
  LLM_TIMEOUT_MS: int(120_000, 1000),
  LLM_PRICES: pricesSchema.optional().describe('USD per million tokens by model name ("*" the fallback); 0.15/0.6 by default, 0 with the local model'),
  DATA_DIR: z.string().min(1).default(path.resolve('.data')),
  BLOB_STORE: z
    .enum(['files', 'gridfs'])
    .default('files')
    .describe('Where uploads, downloads and profile archives are kept: files under BLOB_DIR (one machine or a shared volume), or GridFS in the database (API and workers on several machines)'),
  BLOB_DIR: z.string().min(1).optional().describe('Directory of BLOB_STORE=files (default DATA_DIR/blobs)'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PAYLOAD_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional()
    .describe('Key of the Temporal payload codec; generated under DATA_DIR when unset'),
  VIEW_TOKEN_SECRET: z.string().min(16).optional(),
  SESSION_IDLE_TIMEOUT_MS: int(300_000, 1000),
  ORPHAN_GRACE_MS: int(300_000, 1000).describe('How long a session whose worker died waits to be restored elsewhere'),
  HIBERNATE_AFTER_MS: int(120_000, 0).describe('A session waiting this long for a person (guardrail, approval) lets its browser go until the answer; 0: never'),
  SESSION_IDLE_DISCARD_MS: int(60_000, 0).describe('An idle session (no task) lets its browser go this long after its last activity, until its next task or a takeover; 0: never'),
  GUARDRAIL_MAX_WAIT_MS: int(86_400_000, 1000).describe('The longest a task waits for a person; then the session expires'),
  INLINE_WAIT_MS: int(50_000, 0, 600_000),
  NAVIGATION_TIMEOUT_MS: int(30_000, 1000),
  DEFAULT_SESSION_LIMIT: int(5, 1),
  RATE_LIMIT_PER_MINUTE: int(10, 1).describe('Requests per minute per user on the session, message, task and upload endpoints'),
  MIN_BALANCE_USD: z.coerce.number().min(0).default(0.01),
  MAX_AGENT_STEPS: int(100, 1),
  OBSERVATION_TOKEN_BUDGET: int(6000, 500),
  BROWSER_MAX_SESSIONS: int(10, 1),
  BROWSER_READY_CONTEXTS: int(2, 0, 50).describe('Browser contexts each worker keeps ready for new sessions without a profile or proxy (0: make each on demand)'),
  WORKER_ID: z.string().min(1).optional(),
  WORKER_HEARTBEAT_MS: int(5000, 100),
  WORKER_TTL_MS: int(15_000, 500),
  BODY_LIMIT: z.string().default('1mb'),
  PROFILE_MAX_BYTES: int(500 * 1024 * 1024, 1024).describe('Largest profile archive (.tar.gz) an upload may send'),
  PROFILE_MAX_EXPANDED_BYTES: int(2 * 1024 * 1024 * 1024, 1024).describe('Largest total size of the files inside a profile archive'),
  FILE_MAX_BYTES: int(DEFAULT_FILE_MAX_BYTES, 1).describe('Largest single uploaded file, and largest captured download'),
  USER_STORAGE_MAX_BYTES: int(5 * 1024 * 1024 * 1024, 1).describe('Everything one user may keep in blob storage'),
  FILE_UPLOAD_TTL_MS: int(60 * 60 * 1000, 1000).describe('How long an upload not attached to an environment or a live task is kept'),
  DOWNLOAD_TTL_MS: int(7 * 24 * 60 * 60 * 1000, 0).describe('How long a file the agent\'s browser downloaded is kept (0: until its owner deletes it)'),
  RECORDS_RETENTION_DAYS: z.coerce.number().min(0).default(30).describe("Days an ended session's records (its tasks, their recordings and step pictures, its events) and finished trigger runs are kept; fractions allowed; 0: kept forever"),
  RECORDS_SWEEP_INTERVAL_MS: int(60_000, 100).describe("How often each process deletes the records past RECORDS_RETENTION_DAYS (at most 200 ended sessions a pass)"),
  CRON_JOBS_RATE_LIMIT_PER_MINUTE: int(60, 1).describe('Per user: requests to /cron-jobs per minute'),
  POLICIES_RATE_LIMIT_PER_MINUTE: int(60, 1).describe('Per user: requests to /policies per minute'),
  WEBHOOKS_RATE_LIMIT_PER_MINUTE: int(60, 1).describe('Per user: requests to /webhooks per minute'),
  RECORDINGS_RATE_LIMIT_PER_MINUTE: int(60, 1).describe("Per user: requests for a task's recording (read or delete) per minute"),
  PROFILES_RATE_LIMIT_PER_15_MINUTES: int(100, 1).describe('Per client address: requests to /profiles per 15 minutes, unauthenticated ones included'),
  UPLOAD_RATE_LIMIT_PER_MINUTE: int(30, 1).describe('Per user: profile archive uploads (environments and profiles) and environment file uploads per minute'),
  SESSION_SWEEP_INTERVAL_MS: int(60_000, 200).describe('How often session slots and profile locks left by session workflows that are gone (terminated, crashed) are freed'),
  NETWORK_CAPTURE_MAX: int(500, 0).describe('Requests recorded per task in data.network'),
  MAX_TRIGGERS_PER_USER: int(50, 1).describe('Triggers (cron jobs) one user may have'),
  TRUST_PROXY: z
    .string()
    .default('loopback')
    .transform((v) => (v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v))
    .describe('Which proxies X-Forwarded-For is believed from (Express "trust proxy"): loopback by default, so a client cannot pick its own address for per-address limits'),
  CHAT_API_BASE_URLS: chatBaseUrlsSchema.default({} as never).describe('API roots of the chat providers by name (a proxy, a test double); the providers\' own by default'),
  SHUTDOWN_GRACE_MS: int(30_000, 0),
  LEASE_HANDOVER_MS: int(15_000, 250).describe('How long a browser whose session workflow is gone (terminated from outside) waits for a run that continued the session as new, before it is closed'),
  PRIVATE_NETWORK_ALLOWLIST: z
    .string()
    .default('')
    .superRefine((v, ctx) => {
      try {
        parseAllowlist(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .describe('Private destinations the agent\'s browser and deliveries may reach: comma-separated host, host:port, CIDR or CIDR:port (everything private is refused by default)'),
  MANAGED_PROXIES: jsonSetting(z.array(z.object({ country: z.string().regex(/^[A-Za-z]{2}$/), url: url(['http:', 'socks5:']) }).strict()))
    .default([] as never)
    .describe('The pool of managed proxies (proxy.source "Service"): JSON list of {country, url}, url http:// or socks5:// with credentials'),
  PROXY_PRICE_PER_GB: z.coerce.number().min(0).default(4).describe('USD per GB relayed through a managed proxy'),
  MAX_POLICIES_PER_USER: int(50, 1, 1000).describe('Automation policies one user may have'),
  MAX_POLICY_RULES: int(50, 1, 500).describe('Rules one automation policy may hold'),
  // Bounds of the live channel (each enforced across all API instances through Redis).
  SOCKET_MAX_PER_SESSION: int(20, 1).describe('Socket.IO connections one session may have open at once'),
  SOCKET_MAX_PER_ADDRESS: int(50, 1).describe('Socket.IO connections one client address may have open at once'),
  SOCKET_REPLAY_MAX_EVENTS: int(1000, 0).describe('Events a connection asking with auth.lastSeq is replayed at most (the newest ones)'),
  SOCKET_REPLAYS_PER_MINUTE: int(20, 1).describe('Connections with auth.lastSeq (replays) per session and client address per minute'),
  WHEP_MAX_PEERS_PER_SESSION: int(10, 1).describe('WebRTC (WHEP) viewers one session may have at once'),
  MJPEG_MAX_VIEWERS_PER_SESSION: int(10, 1).describe('MJPEG viewers (GET /view/:sessionId/stream) one session may have at once, across API instances; 429 past it'),
  WHEP_ICE_SERVERS: jsonSetting(z.array(z.object({ urls: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]), username: z.string().optional(), credential: z.string().optional() }).strict()))
    .default([] as never)
    .describe('STUN/TURN servers of the WHEP peer connections (JSON list of {urls, username?, credential?}): their public candidates are what viewers outside the network connect to'),
  WHEP_PRIVATE_CANDIDATES: bool.default(false).describe("WHEP answers list the API host's candidates on private addresses (viewers on the same network); off by default, so an answer does not describe the inside"),
  // The browser's own sandbox: on unless the process runs as root, where Chromium cannot start with it.
  CHROMIUM_SANDBOX: bool.default(() => process.getuid?.() !== 0).describe("Chromium's sandbox (on by default unless running as root; the Docker image runs as a non-root user)"),
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional().describe("Port of a worker process's own GET /metrics (Prometheus); off when unset. The API serves /metrics on PORT"),
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional().describe("Loopback port where the Temporal SDK exports its metrics, included in the worker's /metrics (METRICS_PORT + 1 by default)"),
  METRICS_TOKEN: z.string().min(16).optional().describe('Bearer token /metrics asks for (API and workers); open to anyone who reaches it when unset'),
  // Bounds of the MCP sessions (/mcp, /mcp/sse) each API process keeps in memory.
  MCP_MAX_SESSIONS_PER_USER: int(10, 1).describe('MCP sessions (streamable HTTP or SSE) one user may have open at once on one API process; the next initialize is refused with 429 and JSON-RPC error -32600'),
  MCP_SESSION_IDLE_MS: int(30 * 60 * 1000, 1000).describe('An MCP session with no request for this long (and no tool call still running) is closed and its slot freed'),
});

type ParsedConfig = z.infer<typeof configSchema>;
export type Config = Omit<ParsedConfig, 'LLM_PROVIDER' | 'LLM_MODEL' | 'LLM_PRICES'> & {
  PUBLIC_BASE_URL: string;
  LLM_PROVIDER: 'openai' | 'anthropic' | 'local';
  LLM_MODEL: string;
  LLM_PRICES: Record<string, { input: number; output: number }>;
};

/** Where the packaged default model is kept (outside the clone, beside the other cached builds). */
export function defaultModelPath(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.BAS_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache'), 'browser-agent-service');
  return path.join(cache, 'models', 'qwen2.5-coder-1.5b-instruct.gguf');
}


export class ConfigError extends Error {}

/** How long a call to the local model may take unless LLM_TIMEOUT_MS says otherwise. */
export const LOCAL_TIMEOUT_MS = 600_000;

/** Room kept for the local model's answer within its context. */
export const LOCAL_ANSWER_TOKENS = 768;

/** Parses the environment; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = configSchema.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((i) => {
      const name = String(i.path[0]);
      return `  ${i.path.join('.')}: ${i.message} (got ${shownValue(name, present[name])})`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const cfg = result.data;
  if (cfg.ROLE === 'model' && cfg.MODEL_API_KEY === undefined && !isLoopback(cfg.MODEL_HOST)) {
    throw new ConfigError(`Invalid configuration:\n  MODEL_API_KEY: required when the model role listens beyond loopback (MODEL_HOST=${cfg.MODEL_HOST}), so only the service's workers can use it`);
  }
  // Nothing configured: the local model, so a fresh install has an agent that works.
  const provider = cfg.LLM_PROVIDER ?? (cfg.LLM_BASE_URL || cfg.LLM_API_KEY ? 'openai' : 'local');
  const local = provider === 'local';
  return {
    ...cfg,
    PUBLIC_BASE_URL: (cfg.PUBLIC_BASE_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/$/, ''),
    LLM_PROVIDER: provider,
    LLM_MODEL: cfg.LLM_MODEL ?? (local ? defaultModelPath(env) : provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini'),
    LLM_PRICES: cfg.LLM_PRICES ?? (local ? { '*': { input: 0, output: 0 } } : { '*': { input: 0.15, output: 0.6 } }),
    LLM_CONTEXT_TOKENS: cfg.LLM_CONTEXT_TOKENS || (local ? cfg.LLM_CONTEXT_SIZE - LOCAL_ANSWER_TOKENS : 100_000),
    // One local model serves every worker's calls one at a time on the CPU: a call may wait behind others.
    LLM_TIMEOUT_MS: local && present.LLM_TIMEOUT_MS === undefined ? LOCAL_TIMEOUT_MS : cfg.LLM_TIMEOUT_MS,
  };
}

/** Whether a listening address is reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Settings whose whole value is a secret. */
const SECRET_NAME = /(^|_)(KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?)$/i;

/**
 * A bad value as a config error may show it: a secret setting only by its length, and in
 * any other value the passwords and query strings of URLs are hidden.
 */
export function shownValue(name: string, value: string | undefined): string {
  if (value === undefined) return 'nothing';
  if (SECRET_NAME.test(name)) return `a value of ${value.length} characters, not shown`;
  const masked = value
    // scheme://user:password@host → scheme://user:***@host (the user name alone stays)
    .replace(/(\/\/[^/?#\s@:]*):[^/?#\s@]*@/g, '$1:***@')
    // ?token=... → ?***
    .replace(/\?[^\s"#]*/g, '?***');
  return JSON.stringify(masked);
}

/** For entry points: the configuration, or exit 2 with the message naming the bad variables. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
