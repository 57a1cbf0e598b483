/**
 * The model role: a GGUF model run by node-llama-cpp in a process of its own, serving the
 * OpenAI chat-completions wire format (tools → tool_calls) on loopback. Every worker reaches
 * it through the same OpenAI client as a hosted provider.
 *
 * - Answers are constrained by a grammar built from the offered tools' schemas, so each is
 *   one well-formed call of an offered tool with a short thought (answer-format.ts).
 * - The context of each conversation is kept evaluated in one of LLM_SEQUENCES sequences:
 *   a task's next step re-evaluates only what changed since its last one (node-llama-cpp
 *   compares the new prompt's tokens with the sequence's and keeps the common prefix).
 * - Requests are served one at a time (generation already uses every thread).
 */
import http from 'node:http';
import os from 'node:os';
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from '../logger';
import { answerSchema, parseAnswer, toPrompt, type OfferedTool, type PromptItem, type WireMessage } from './answer-format';

export interface ModelServerOptions {
  modelPath: string;
  host: string;
  port: number;
  /** 0: all cores. */
  threads: number;
  contextSize: number;
  sequences: number;
  /** Directory where an `hf:` model is downloaded to. */
  cacheDir: string;
  logger: Logger;
}

export interface RunningModelServer {
  url: string;
  close(): Promise<void>;
}

/** node-llama-cpp is an ES module with top-level await: loaded with a real dynamic import. */
type LlamaModule = typeof import('node-llama-cpp');
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<LlamaModule>;

type Llama = Awaited<ReturnType<LlamaModule['getLlama']>>;
type Model = Awaited<ReturnType<Llama['loadModel']>>;
type Context = Awaited<ReturnType<Model['createContext']>>;
type Sequence = ReturnType<Context['getSequence']>;
type Chat = InstanceType<LlamaModule['LlamaChat']>;
type Grammar = Awaited<ReturnType<Llama['createGrammarForJsonSchema']>>;

interface Slot {
  sequence: Sequence;
  chat: Chat;
  /** The prompt it last evaluated (as JSON), to find the conversation it holds. */
  key: string | null;
  lastUsed: number;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_TOKENS = 512;
const GRAMMAR_CACHE = 16;

export async function startModelServer(opts: ModelServerOptions): Promise<RunningModelServer> {
  const log = opts.logger;
  const mod = await importModule('node-llama-cpp');
  const started = performance.now();
  const llama = await mod.getLlama({ gpu: false, build: 'never', logLevel: mod.LlamaLogLevel.error });
  const modelPath = opts.modelPath.startsWith('hf:') ? await mod.resolveModelFile(opts.modelPath, { directory: opts.cacheDir, cli: false }) : opts.modelPath;
  const model = await llama.loadModel({ modelPath });
  // One thread per core: more threads than cores make llama.cpp's threads wait on each other.
  const context = await model.createContext({ contextSize: opts.contextSize, sequences: opts.sequences, threads: opts.threads || os.availableParallelism() });
  const slots: Slot[] = Array.from({ length: opts.sequences }, () => {
    const sequence = context.getSequence();
    return { sequence, chat: new mod.LlamaChat({ contextSequence: sequence }), key: null, lastUsed: 0 };
  });
  const modelName = String(model.fileInfo.metadata?.general?.name ?? modelPath.split('/').pop());
  log.info({ model: modelName, path: modelPath, loadMs: Math.round(performance.now() - started), contextSize: context.contextSize, sequences: opts.sequences, threads: context.currentThreads }, 'model loaded');

  const grammars = new Map<string, Grammar>();
  const grammarFor = async (tools: OfferedTool[]): Promise<Grammar> => {
    const schema = answerSchema(tools);
    const key = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
    let grammar = grammars.get(key);
    if (!grammar) {
      grammar = await llama.createGrammarForJsonSchema(schema as never);
      if (grammars.size >= GRAMMAR_CACHE) grammars.delete(grammars.keys().next().value!);
      grammars.set(key, grammar);
    }
    return grammar;
  };

  /**
   * The slot whose last prompt shares the longest start with this one (the same conversation
   * a step later), or the one unused longest when none shares more than the system text.
   */
  const slotFor = (prompt: PromptItem[]): Slot => {
    const text = JSON.stringify(prompt);
    const system = JSON.stringify(prompt[0] ?? '').length;
    let best: Slot | undefined;
    let bestShared = system;
    for (const slot of slots) {
      const shared = commonPrefix(slot.key ?? '', text);
      if (shared > bestShared) [best, bestShared] = [slot, shared];
    }
    const slot = best ?? slots.reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b));
    slot.key = text;
    slot.lastUsed = Date.now();
    return slot;
  };

  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const complete = async (body: ChatRequest, signal: AbortSignal) => {
    const tools: OfferedTool[] = (body.tools ?? []).filter((t) => t?.type === 'function' && t.function?.name).map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters }));
    const prompt = toPrompt(body.messages, tools);
    const maxTokens = Math.max(16, Math.min(Number(body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS) || DEFAULT_MAX_TOKENS, 4096));
    const grammar = tools.length ? await grammarFor(tools) : undefined;
    return serialized(async () => {
      if (signal.aborted) throw new Error('the client went away');
      const slot = slotFor(prompt);
      const before = slot.sequence.tokenMeter.getState();
      const t0 = performance.now();
      const res = await slot.chat.generateResponse(prompt as never, { grammar, maxTokens, temperature: 0, signal });
      const after = slot.sequence.tokenMeter.getState();
      const completionTokens = after.usedOutputTokens - before.usedOutputTokens;
      const evaluated = after.usedInputTokens - before.usedInputTokens;
      const promptTokens = Math.max(evaluated, slot.sequence.contextTokens.length - completionTokens);
      const ms = Math.round(performance.now() - t0);
      return { text: res.response, stop: res.metadata.stopReason, promptTokens, cachedTokens: promptTokens - evaluated, completionTokens, ms, tools };
    });
  };

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err) => {
      log.error({ err }, 'model request failed');
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'The model failed to answer', type: 'server_error' } });
      else res.end();
    });
  });

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (url === '/health' || url === '/v1/health')) return sendJson(res, 200, { status: 'ok', model: modelName });
    if (req.method === 'GET' && url === '/v1/models') return sendJson(res, 200, { object: 'list', data: [{ id: modelName, object: 'model', owned_by: 'local' }] });
    if (req.method !== 'POST' || url !== '/v1/chat/completions') return sendJson(res, 404, { error: { message: `No route ${req.method} ${url}`, type: 'invalid_request_error' } });
    let body: ChatRequest;
    try {
      body = JSON.parse(await readBody(req)) as ChatRequest;
      if (!Array.isArray(body.messages) || !body.messages.length) throw new Error('messages must be a non-empty array');
    } catch (err) {
      return sendJson(res, 400, { error: { message: `Invalid request: ${(err as Error).message}`, type: 'invalid_request_error' } });
    }
    if (body.stream) return sendJson(res, 400, { error: { message: 'stream is not supported by the local model server', type: 'invalid_request_error' } });
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableEnded) abort.abort();
    });
    const out = await complete(body, abort.signal);
    const id = `chatcmpl-${randomUUID()}`;
    let message: Record<string, unknown> = { role: 'assistant', content: out.text };
    let finish = out.stop === 'maxTokens' ? 'length' : 'stop';
    if (out.tools.length) {
      try {
        const answer = parseAnswer(out.text, out.tools);
        message = { role: 'assistant', content: answer.thought || null, tool_calls: [{ id: `call_${randomUUID().slice(0, 12)}`, type: 'function', function: { name: answer.name, arguments: answer.arguments } }] };
        finish = 'tool_calls';
      } catch (err) {
        // Cut off by max_tokens: returned as text, which the agent answers as a malformed call.
        log.warn({ err: (err as Error).message, stop: out.stop }, 'model answer is not a complete call');
      }
    }
    log.info({ promptTokens: out.promptTokens, cachedTokens: out.cachedTokens, completionTokens: out.completionTokens, ms: out.ms }, 'completion');
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage: { prompt_tokens: out.promptTokens, completion_tokens: out.completionTokens, total_tokens: out.promptTokens + out.completionTokens, prompt_tokens_details: { cached_tokens: out.cachedTokens } },
    });
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address() as { port: number };
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${address.port}/v1`;
  log.info({ url }, 'model server listening');
  return {
    url,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}

interface ChatRequest {
  messages: WireMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`the body is larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
