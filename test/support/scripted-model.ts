import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an OpenAI-compatible model server. The real client code talks to it over
 * HTTP; what it answers is scripted per test. Scripts are registered over HTTP so test
 * processes share the one server that the jest global setup starts.
 *
 * A chat completion request is answered by the script whose `match` string occurs in its
 * messages, searched from the last message back (a follow-up task's token wins over the
 * earlier task's); when several occur in the same message, the longest `match` wins, so
 * a script with `match: ''` is a catch-all. Each request takes the script's next step;
 * once the steps run out the last one repeats. A request aborted during `delayMs` has
 * still used its step. Registering a `match` again replaces that script and its cursor.
 */
export interface Step {
  /** Answer with one call of this tool; `args` may use `{ref: '<label>'}` and `{{find:<regex>}}`. */
  tool?: string;
  args?: Record<string, unknown>;
  /** Assistant text; alone it is an answer without a tool call. `{{find:...}}` works here too. */
  text?: string;
  /** Answer with several tool calls in one message, in this order (after `tool`, when both are given). */
  calls?: { tool: string; args?: Record<string, unknown> }[];
  /** A tool call sent as given, its arguments unchecked (may be invalid JSON). */
  rawToolCall?: { name: string; arguments: string };
  /** Answer with this HTTP status and an OpenAI-style error body. */
  httpError?: number;
  /** The error message of an httpError step. */
  message?: string;
  /** Wait before answering; the wait ends early if the client disconnects. */
  delayMs?: number;
  /** Answer only once the test opened this gate (`openGate`), after any `delayMs`. */
  gate?: string;
  /** Reported usage; by default ceil(characters of the messages / 4) and 20. */
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface Script {
  /** A token the test puts in its task prompt. */
  match: string;
  steps: Step[];
  /** Every request of this script is refused with 401, as with a wrong API key. */
  authFail?: boolean;
}

export interface RecordedRequest {
  /** The matched script's `match`, or null. */
  match: string | null;
  /** Index of the step that answered, or null (no script, authFail). */
  step: number | null;
  /** The parsed chat completion request. */
  body: any;
  /** When the request arrived and when its answer was sent (Date.now()). */
  at: number;
  answeredAt?: number;
}

export interface ScriptedModel {
  /** Base URL for the OpenAI client, ending in /v1. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

interface ScriptState {
  script: Script;
  cursor: number;
  order: number;
}

const ELEMENT_LINE = /^\s*\[(\d+)\]\s+[^"\n]*?"((?:[^"\\\n]|\\.)*)"/gm;
const FIND = /\{\{find:(.+?)\}\}/g;
const NOT_FOUND = '<not found>';

export async function startScriptedModel(opts: { port?: number } = {}): Promise<ScriptedModel> {
  const scripts = new Map<string, ScriptState>();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  /** Gates by name: open, or the answers waiting for it. */
  const gates = new Map<string, { open: boolean; waiting: (() => void)[] }>();
  const gate = (name: string) => {
    let g = gates.get(name);
    if (!g) gates.set(name, (g = { open: false, waiting: [] }));
    return g;
  };
  let registered = 0;
  let calls = 0;

  const pick = (texts: string[]): ScriptState | undefined => {
    for (let i = texts.length - 1; i >= 0; i--) {
      let best: ScriptState | undefined;
      for (const state of scripts.values()) {
        if (!texts[i].includes(state.script.match)) continue;
        const length = state.script.match.length;
        if (!best || length > best.script.match.length || (length === best.script.match.length && state.order > best.order)) best = state;
      }
      if (best) return best;
    }
    return undefined;
  };

  const chat = (body: any, res: http.ServerResponse) => {
    if (!body || !Array.isArray(body.messages)) return sendError(res, 400, 'messages must be an array');
    if (body.stream) return sendError(res, 400, 'The scripted model does not stream');
    const texts: string[] = body.messages.map(messageText);
    const state = pick(texts);
    const recorded: RecordedRequest = { match: state?.script.match ?? null, step: null, body, at: Date.now() };
    requests.push(recorded);
    if (state?.script.authFail) return sendError(res, 401);

    let step: Step;
    if (!state) {
      step = { tool: 'done', args: { message: 'no script matched', success: false } };
    } else {
      recorded.step = Math.min(state.cursor, state.script.steps.length - 1);
      step = state.script.steps[recorded.step];
      state.cursor = recorded.step + 1;
    }
    const answerNow = () => {
      if (res.destroyed) return;
      recorded.answeredAt = Date.now();
      if (step.httpError) return sendError(res, step.httpError, step.message);
      sendJson(res, 200, completion(body, step, texts, ++calls));
    };
    const answer = () => {
      if (!step.gate) return answerNow();
      const g = gate(step.gate);
      if (g.open) return answerNow();
      g.waiting.push(answerNow);
    };
    if (!step.delayMs) return answer();
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer();
    }, step.delayMs);
    timers.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  };

  const register = (body: any, res: http.ServerResponse) => {
    const script = body as Script;
    if (typeof script?.match !== 'string' || !Array.isArray(script.steps) || (!script.steps.length && !script.authFail)) {
      return sendError(res, 400, 'A script needs a match string and a non-empty steps array');
    }
    scripts.set(script.match, { script, cursor: 0, order: ++registered });
    sendJson(res, 200, { ok: true });
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    // Control routes work with or without the /v1 of the client base URL.
    const path = url.pathname.replace(/^\/v1(?=\/__)/, '');
    readBody(req)
      .then((raw) => {
        if (req.method === 'GET' && path === '/v1/models') {
          return sendJson(res, 200, { object: 'list', data: [{ id: 'scripted-model', object: 'model', created: 0, owned_by: 'scripted' }] });
        }
        if (req.method === 'GET' && path === '/__requests') {
          const match = url.searchParams.get('match');
          return sendJson(res, 200, match === null ? requests : requests.filter((r) => r.match === match));
        }
        if (req.method === 'POST' && path === '/__gates') {
          const name = url.searchParams.get('open');
          if (!name) return sendError(res, 400, 'open=<gate> is required');
          const g = gate(name);
          g.open = true;
          const waiting = g.waiting.splice(0);
          for (const release of waiting) release();
          return sendJson(res, 200, { ok: true, released: waiting.length });
        }
        if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/__scripts')) {
          return sendError(res, 404, `No route ${req.method} ${url.pathname}`);
        }
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          return sendError(res, 400, 'The body is not valid JSON');
        }
        return path === '/__scripts' ? register(body, res) : chat(body, res);
      })
      .catch(() => res.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Registers a script on a running scripted model; `baseUrl` may end in /v1. */
export async function registerScript(baseUrl: string, script: Script): Promise<void> {
  const res = await fetch(`${controlBase(baseUrl)}/__scripts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(script) });
  if (!res.ok) throw new Error(`registering the script "${script.match}" failed: ${res.status} ${await res.text()}`);
}

/** Opens a gate: the answers of steps with this `gate` are sent, now and from then on. */
export async function openGate(baseUrl: string, name: string): Promise<number> {
  const res = await fetch(`${controlBase(baseUrl)}/__gates?open=${encodeURIComponent(name)}`, { method: 'POST' });
  if (!res.ok) throw new Error(`opening the gate "${name}" failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { released: number }).released;
}

/** What the model was sent for one script (or all requests without `match`). */
export async function recordedRequests(baseUrl: string, match?: string): Promise<RecordedRequest[]> {
  const query = match === undefined ? '' : `?match=${encodeURIComponent(match)}`;
  const res = await fetch(`${controlBase(baseUrl)}/__requests${query}`);
  if (!res.ok) throw new Error(`reading the recorded requests failed: ${res.status}`);
  return (await res.json()) as RecordedRequest[];
}

/** Text of all messages of a recorded request, for assertions. */
export function requestText(request: RecordedRequest): string {
  return (request.body?.messages ?? []).map(messageText).join('\n');
}

function controlBase(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function messageText(m: any): string {
  const parts: string[] = [];
  if (typeof m?.content === 'string') parts.push(m.content);
  else if (Array.isArray(m?.content)) for (const p of m.content) if (typeof p?.text === 'string') parts.push(p.text);
  for (const c of m?.tool_calls ?? []) parts.push(`${c?.function?.name ?? ''} ${c?.function?.arguments ?? ''}`);
  return parts.join('\n');
}

function completion(body: any, step: Step, texts: string[], n: number): Record<string, unknown> {
  const fill = (value: string) => value.replace(FIND, (_all, pattern: string) => find(pattern, texts));
  const calls: { name: string; arguments: string }[] = [];
  const scripted = (tool: string, args: Record<string, unknown> | undefined) => ({ name: tool, arguments: JSON.stringify(resolveArgs(args ?? {}, body.messages, fill)) });
  if (step.rawToolCall) calls.push(step.rawToolCall);
  else if (step.tool) calls.push(scripted(step.tool, step.args));
  for (const listed of step.calls ?? []) calls.push(scripted(listed.tool, listed.args));
  const call = calls[0];
  const content = step.text === undefined ? (call ? null : '') : fill(step.text);
  const message: Record<string, unknown> = { role: 'assistant', content, refusal: null };
  if (call) message.tool_calls = calls.map((one, i) => ({ id: `call_${n}_${i}_${randomBytes(4).toString('hex')}`, type: 'function', function: one }));
  const chars = texts.reduce((sum, t) => sum + t.length, 0);
  const usage = step.usage ?? { prompt_tokens: Math.ceil(chars / 4), completion_tokens: 20 };
  return {
    id: `chatcmpl-scripted-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'scripted-model',
    choices: [{ index: 0, message, logprobs: null, finish_reason: call ? 'tool_calls' : 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

function resolveArgs(value: unknown, messages: any[], fill: (s: string) => string): unknown {
  if (typeof value === 'string') return fill(value);
  if (Array.isArray(value)) return value.map((v) => resolveArgs(v, messages, fill));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0][0] === 'ref' && typeof entries[0][1] === 'string') return resolveRef(entries[0][1], messages);
    return Object.fromEntries(entries.map(([k, v]) => [k, resolveArgs(v, messages, fill)]));
  }
  return value;
}

/** Index of the element labelled `label` in the latest observation (user message with element lines). */
function resolveRef(label: string, messages: any[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role !== 'user') continue;
    const elements = [...messageText(messages[i]).matchAll(ELEMENT_LINE)].map((m) => ({ index: Number(m[1]), label: m[2].replace(/\\(.)/g, '$1') }));
    if (!elements.length) continue;
    const wanted = label.toLowerCase();
    const found = elements.find((e) => e.label === label) ?? elements.find((e) => e.label.toLowerCase().includes(wanted));
    return found ? found.index : -1;
  }
  return -1;
}

/** First capture group (or the whole match) of `pattern`, searching the last message first. */
function find(pattern: string, texts: string[]): string {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch {
    return NOT_FOUND;
  }
  for (let i = texts.length - 1; i >= 0; i--) {
    const m = re.exec(texts[i]);
    if (m) return m[1] ?? m[0];
  }
  return NOT_FOUND;
}

const ERROR_KINDS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: 'Bad request', type: 'invalid_request_error', code: null },
  401: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { message: 'You are not allowed to use this model.', type: 'invalid_request_error', code: 'permission_denied' },
  404: { message: 'Not found', type: 'invalid_request_error', code: null },
  429: { message: 'Rate limit reached for requests.', type: 'requests', code: 'rate_limit_exceeded' },
};

function sendError(res: http.ServerResponse, status: number, message?: string): void {
  const kind = ERROR_KINDS[status] ?? { message: 'The server had an error while processing your request.', type: 'server_error', code: null };
  // Short retry hints keep the SDK's own retries (when a test enables them) fast.
  const headers = status === 429 || status >= 500 ? { 'retry-after-ms': '10' } : undefined;
  sendJson(res, status, { error: { message: message ?? kind.message, type: kind.type, param: null, code: kind.code } }, headers);
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
