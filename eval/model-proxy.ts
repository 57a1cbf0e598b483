import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A measuring proxy between the service and its model: each request is forwarded as is (body
 * and Authorization / x-api-key headers) to the configured model server, timed, and the usage
 * of its answer read (OpenAI: prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens;
 * Anthropic: input_tokens, output_tokens, cache_read_input_tokens).
 */
export interface ModelCall {
  path: string;
  startedAt: number;
  endedAt: number;
  ms: number;
  status: number;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  /** The eval run whose request this was (`tagOf`), when the proxy was given one. */
  runId?: string;
}

export interface ModelProxy {
  /** What the service gets as LLM_BASE_URL. */
  baseUrl: string;
  calls: ModelCall[];
  /** Resolves once no request is in flight (or after `timeoutMs`). */
  idle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** What the model was last told and what it answered, one JSON line per call (for reading what went wrong). */
function traceCall(file: string, requestBody: Buffer, answer: any, ms: number): void {
  try {
    const req = JSON.parse(requestBody.toString('utf8')) as { messages?: { role: string; content?: unknown }[] };
    const last = (req.messages ?? []).slice(-3).map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content.slice(0, 4000) : m.content }));
    fs.appendFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), ms: Math.round(ms), last, answer: answer?.choices?.[0]?.message ?? answer?.content ?? answer })}\n`);
    // Whole requests, for replaying them against the model (bench/model-speed.bench.ts).
    if (process.env.EVAL_REQUESTS_OUT) fs.appendFileSync(process.env.EVAL_REQUESTS_OUT, `${JSON.stringify(req)}\n`);
  } catch {
    /* a trace is best effort */
  }
}

const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding', 'accept-encoding', 'proxy-connection', 'upgrade']);

function usageOf(body: any, provider: string): Pick<ModelCall, 'promptTokens' | 'completionTokens' | 'cachedPromptTokens'> {
  const u = body?.usage ?? {};
  if (provider === 'anthropic') {
    const cached = Number(u.cache_read_input_tokens ?? 0);
    // Anthropic counts cached and newly cached input apart from input_tokens
    return { promptTokens: Number(u.input_tokens ?? 0) + cached + Number(u.cache_creation_input_tokens ?? 0), completionTokens: Number(u.output_tokens ?? 0), cachedPromptTokens: cached };
  }
  return { promptTokens: Number(u.prompt_tokens ?? 0), completionTokens: Number(u.completion_tokens ?? 0), cachedPromptTokens: Number(u.prompt_tokens_details?.cached_tokens ?? 0) };
}

/**
 * `upstream` is the model's base URL as a client would be configured with it (OpenAI: ending
 * in /v1; Anthropic: the API root). The proxy's own base URL mirrors it.
 */
export async function startModelProxy(opts: { upstream: string; provider: 'openai' | 'anthropic'; trace?: string; tagOf?: (requestBody: string) => string | undefined }): Promise<ModelProxy> {
  const upstream = opts.upstream.replace(/\/+$/, '');
  const prefix = opts.provider === 'anthropic' ? '' : '/v1';
  const calls: ModelCall[] = [];
  let inFlight = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      inFlight += 1;
      const startedAt = Date.now();
      const runId = opts.tagOf?.(Buffer.concat(chunks).toString('utf8'));
      const t0 = performance.now();
      const path = (req.url ?? '/').startsWith(prefix) ? (req.url ?? '/').slice(prefix.length) : (req.url ?? '/');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (!HOP_HEADERS.has(k) && typeof v === 'string') headers[k] = v;
      const controller = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) controller.abort();
      });
      fetch(`${upstream}${path}`, { method: req.method, headers, body: ['GET', 'HEAD'].includes(req.method ?? 'GET') ? undefined : Buffer.concat(chunks), signal: controller.signal })
        .then(async (up) => {
          const text = await up.text();
          const ms = performance.now() - t0;
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON: no usage */
          }
          if (req.method === 'POST') calls.push({ path, startedAt, endedAt: Date.now(), ms, status: up.status, ...usageOf(parsed, opts.provider), runId });
          if (opts.trace && req.method === 'POST') traceCall(opts.trace, Buffer.concat(chunks), parsed, ms);
          const out: Record<string, string> = {};
          up.headers.forEach((v, k) => {
            if (!HOP_HEADERS.has(k) && k !== 'content-encoding') out[k] = v;
          });
          res.writeHead(up.status, out).end(text);
        })
        .catch((err: unknown) => {
          if (req.method === 'POST') calls.push({ path, startedAt, endedAt: Date.now(), ms: performance.now() - t0, status: 0, promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0, runId });
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `model proxy: ${String((err as Error).message ?? err)}`, type: 'proxy_error' } }));
          else res.destroy();
        })
        .finally(() => (inFlight -= 1));
    });
  });
  // a slow local model answers long after the default timeouts of a Node server
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${prefix}`,
    calls,
    idle: async (timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
