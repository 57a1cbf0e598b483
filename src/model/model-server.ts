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
 * - Conversations in different sequences are generated at once: node-llama-cpp batches their
 *   tokens into one evaluation, so several tasks share the model's passes over its weights.
 * - A token predictor (LLM_PREDICTOR) guesses the next tokens, which one pass then checks
 *   together: prompt lookup copies runs of the prompt (element names, values, the answer's
 *   keys), a draft model of the same vocabulary drafts them. Neither changes the answer.
 * - With MODEL_API_KEY set, only callers that send it as their bearer token are answered.
 */
import http from 'node:http';
import os from 'node:os';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../logger';
import { answerSchema, parseAnswer, toPrompt, type AnswerShape, type GrammarSchema, type OfferedTool, type PromptItem, type WireMessage } from './answer-format';
import { guessNext } from './answer-guess';
import { copyGuess, insideString } from './copy-guess';
import { loopWatch } from './loop-guard';

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
  /** How the next tokens are guessed ahead of the model: none, prompt lookup, or a draft model. */
  predictor?: PredictorKind;
  /** The draft model (a GGUF of the same vocabulary) when predictor is `draft`. */
  draftModelPath?: string;
  /** When set, every request but /health must carry it as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** The answer's thought bound and how many actions one answer may list. */
  shape?: AnswerShape;
  logger: Logger;
}

export type PredictorKind = 'none' | 'lookup' | 'draft' | 'answer' | 'copy';

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

/** What the choice of a sequence reads of it. */
export interface SlotState {
  /** Generating now: another request takes another slot. */
  busy: boolean;
  /** The prompt it last evaluated (as JSON), to find the conversation it holds. */
  key: string | null;
  lastUsed: number;
  /** Busy evaluating a caller's prompt start (one token asked for), not a conversation. */
  priming?: boolean;
}

interface Slot extends SlotState {
  sequence: Sequence;
  chat: Chat;
  /** The `answer` predictor of its sequence, told each answer's schema. */
  guesser?: AnswerGuesser;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_TOKENS = 512;
const GRAMMAR_CACHE = 16;

interface Loaded {
  mod: LlamaModule;
  llama: Llama;
  model: Model;
  context: Context;
  modelName: string;
  /** The draft model and its context, when the predictor is `draft`. */
  draft?: { model: Model; context: Context };
  dispose(): Promise<void>;
}

/** Loads the model (and the draft model), with a context of `sequences` conversations. */
async function loadModel(opts: ModelServerOptions): Promise<Loaded> {
  const mod = await importModule('node-llama-cpp');
  const started = performance.now();
  const llama = await mod.getLlama({ gpu: false, build: 'never', logLevel: mod.LlamaLogLevel.error });
  const modelPath = opts.modelPath.startsWith('hf:') ? await mod.resolveModelFile(opts.modelPath, { directory: opts.cacheDir, cli: false }) : opts.modelPath;
  const model = await llama.loadModel({ modelPath });
  // One thread per core: more threads than cores make llama.cpp's threads wait on each other.
  const threads = opts.threads || os.availableParallelism();
  const context = await model.createContext({ contextSize: opts.contextSize, sequences: opts.sequences, threads });
  let draft: Loaded['draft'];
  if (opts.predictor === 'draft') {
    if (!opts.draftModelPath) throw new Error('LLM_PREDICTOR=draft needs LLM_DRAFT_MODEL (a GGUF file of the same vocabulary)');
    const draftModel = await llama.loadModel({ modelPath: opts.draftModelPath });
    assertSameVocabulary(model, draftModel);
    draft = { model: draftModel, context: await draftModel.createContext({ contextSize: opts.contextSize, sequences: opts.sequences, threads }) };
  }
  const modelName = String(model.fileInfo.metadata?.general?.name ?? modelPath.split('/').pop());
  opts.logger.info({ model: modelName, path: modelPath, loadMs: Math.round(performance.now() - started), contextSize: context.contextSize, sequences: opts.sequences, threads: context.currentThreads, predictor: opts.predictor ?? 'none' }, 'model loaded');
  const dispose = async () => {
    await context.dispose();
    await draft?.context.dispose();
    await draft?.model.dispose();
    await model.dispose();
    await llama.dispose();
  };
  return { mod, llama, model, context, modelName, draft, dispose };
}

/** A draft model must tokenize as the model does: its guesses are token ids of the model. */
function assertSameVocabulary(model: Model, draft: Model): void {
  const a = model.fileInfo.metadata?.tokenizer?.ggml?.tokens ?? [];
  const b = draft.fileInfo.metadata?.tokenizer?.ggml?.tokens ?? [];
  const same = a.length === b.length && a.every((t, i) => t === b[i]);
  if (!same) throw new Error(`the draft model's vocabulary differs from the model's (${b.length} tokens against ${a.length}): it cannot draft for it`);
}

/** Guessed tokens one pass checks at most (a tool's name and the keys around it fit). */
const ANSWER_GUESS_TOKENS = 16;

/** Told the schema of the answer a request asks for, before its generation. */
interface AnswerGuesser {
  expect(schema: GrammarSchema | undefined): void;
}

/**
 * The `answer` predictor: guesses what the answer's grammar leaves to come next (answer-guess.ts),
 * from the answer's tokens so far: the first reset of a generation holds the whole prompt, so
 * the answer is what follows it. The `copy` predictor also guesses, inside the model's own text,
 * what followed the answer's last tokens where the prompt held them (copy-guess.ts).
 */
function answerPredictor(loaded: Loaded, copy: boolean) {
  const { mod, model } = loaded;
  type Token = Parameters<Model['detokenize']>[0][number];
  class AnswerPredictor extends mod.TokenPredictor implements AnswerGuesser {
    private schema: GrammarSchema | undefined;
    private start = -1;
    private tokens: Token[] = [];
    expect(schema: GrammarSchema | undefined): void {
      this.schema = schema;
      this.start = -1;
    }
    reset({ stateTokens }: { stateTokens: Token[] }): void {
      this.tokens = stateTokens.slice();
      if (this.start < 0 || this.start > this.tokens.length) this.start = this.tokens.length;
    }
    pushTokens(tokens: Token[]): void {
      for (const t of tokens) this.tokens.push(t);
    }
    predictTokens(): Token[] {
      if (!this.schema || this.start < 0) return [];
      const written = model.detokenize(this.tokens.slice(this.start));
      const guess = guessNext(this.schema, written);
      if (guess) return model.tokenize(guess).slice(0, ANSWER_GUESS_TOKENS);
      // The model's own text: a run it copies from the prompt goes on as there.
      return copy && insideString(written) ? copyGuess(this.tokens, { searchEnd: this.start }) : [];
    }
  }
  return new AnswerPredictor();
}

function predictorFor(loaded: Loaded, kind: PredictorKind | undefined) {
  if (kind === 'answer' || kind === 'copy') return answerPredictor(loaded, kind === 'copy');
  if (kind === 'lookup') return new loaded.mod.InputLookupTokenPredictor({ patternLength: { min: 2 }, predictionLength: { max: 8 } });
  if (kind === 'draft' && loaded.draft) return new loaded.mod.DraftSequenceTokenPredictor(loaded.draft.context.getSequence(), { maxTokens: 8, minConfidence: 0.6 });
  return undefined;
}

/**
 * The slot a request takes now, or undefined when it should wait: the free slot whose last
 * prompt shares the longest start with its own (the same conversation a step later), beyond
 * the system prompt, or the free one unused longest. When the longest start is the one a slot
 * is still priming, the request waits for that slot: evaluating the same start again on
 * another sequence would take as long and share the cores with it.
 */
export function chooseSlot<S extends SlotState>(slots: readonly S[], text: string, system: number): S | undefined {
  let best: S | undefined;
  let bestShared = system;
  for (const slot of slots) {
    if (slot.busy && !slot.priming) continue;
    const shared = commonPrefix(slot.key ?? '', text);
    if (shared > bestShared || (shared === bestShared && best?.busy && !slot.busy)) [best, bestShared] = [slot, shared];
  }
  if (best) return best.busy ? undefined : best;
  const free = slots.filter((s) => !s.busy);
  return free.length ? free.reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b)) : undefined;
}

/**
 * The sequences and which conversation each holds (chooseSlot); with every slot busy a
 * request waits for one. The sequences that hold nothing yet are primed only while no
 * conversation waits or generates: its answer comes first.
 */
function slotPool(loaded: Loaded, opts: ModelServerOptions) {
  const slots: Slot[] = Array.from({ length: opts.sequences }, () => {
    const tokenPredictor = predictorFor(loaded, opts.predictor);
    const sequence = loaded.context.getSequence({ tokenPredictor });
    const guesser = tokenPredictor && 'expect' in tokenPredictor ? (tokenPredictor as AnswerGuesser) : undefined;
    return { sequence, chat: new loaded.mod.LlamaChat({ contextSequence: sequence }), guesser, busy: false, key: null, lastUsed: 0 };
  });
  const waiting: (() => void)[] = [];
  let conversationsWaiting = 0;
  const coldSlot = (): Slot | undefined | 'none' => {
    const conversing = conversationsWaiting > 0 || slots.some((s) => s.busy && !s.priming);
    if (conversing || !slots.some((s) => s.key === null)) return 'none';
    return slots.find((s) => s.key === null && !s.busy);
  };
  return {
    async acquire(prompt: PromptItem[], signal: AbortSignal, cold = false): Promise<Slot | undefined> {
      const text = JSON.stringify(prompt);
      const system = JSON.stringify(prompt[0] ?? '').length;
      for (;;) {
        if (signal.aborted) throw new Error('the client went away');
        const slot = cold ? coldSlot() : chooseSlot(slots, text, system);
        if (slot === 'none') return undefined;
        if (slot) {
          Object.assign(slot, { busy: true, key: text, lastUsed: Date.now(), priming: cold });
          return slot;
        }
        if (!cold) conversationsWaiting++;
        await new Promise<void>((resolve) => waiting.push(resolve));
        if (!cold) conversationsWaiting--;
      }
    },
    release(slot: Slot): void {
      slot.busy = false;
      slot.priming = false;
      // Every waiter looks again (one that gave up meanwhile must not take the wake-up with it).
      for (const wake of waiting.splice(0)) wake();
    },
  };
}

interface Completion {
  text: string;
  stop: string;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** Guessed tokens the model confirmed, and those it refuted (token prediction). */
  predicted: { validated: number; refuted: number };
  ms: number;
  /** Until the first answer token: the prompt's new part evaluated (and the first token's pass). */
  promptMs: number;
  tools: OfferedTool[];
}

function completer(loaded: Loaded, opts: ModelServerOptions) {
  const grammars = new Map<string, Grammar>();
  const grammarFor = async (tools: OfferedTool[], brief: boolean): Promise<{ grammar: Grammar; schema: GrammarSchema }> => {
    // (the prompt still describes the thought: it is the same at every call, and stays evaluated)
    const schema = answerSchema(tools, brief ? { ...opts.shape, thoughtMaxChars: 0 } : opts.shape);
    const key = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
    let grammar = grammars.get(key);
    if (!grammar) {
      grammar = await loaded.llama.createGrammarForJsonSchema(schema as never);
      if (grammars.size >= GRAMMAR_CACHE) grammars.delete(grammars.keys().next().value!);
      grammars.set(key, grammar);
    }
    return { grammar, schema };
  };
  const pool = slotPool(loaded, opts);
  return async (body: ChatRequest, signal: AbortSignal): Promise<Completion> => {
    const tools: OfferedTool[] = (body.tools ?? []).filter((t) => t?.type === 'function' && t.function?.name).map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters }));
    const prompt = toPrompt(body.messages, tools, opts.shape);
    const maxTokens = Math.max(1, Math.min(Number(body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS) || DEFAULT_MAX_TOKENS, 4096));
    const { grammar, schema } = tools.length ? await grammarFor(tools, body.thought === false) : { grammar: undefined, schema: undefined };
    // One token asked for: a caller priming the model with the start of its prompts. The
    // sequences that hold nothing yet evaluate it, one after the other, until a conversation
    // comes (a new conversation takes the one unused longest, so each would otherwise start cold).
    if (maxTokens === 1) {
      let primed: Omit<Completion, 'tools'> | undefined;
      for (let slot = await pool.acquire(prompt, signal, true); slot; slot = await pool.acquire(prompt, signal, true)) primed = await generate(pool, slot, { prompt, grammar, schema, maxTokens, signal });
      if (primed) return { ...primed, tools };
    }
    const slot = (await pool.acquire(prompt, signal))!;
    return { ...(await generate(pool, slot, { prompt, grammar, schema, maxTokens, signal })), tools };
  };
}

/** One answer on `slot` (released after it), and where its tokens and time went. */
async function generate(pool: { release(slot: Slot): void }, slot: Slot, req: { prompt: PromptItem[]; grammar: Grammar | undefined; schema: GrammarSchema | undefined; maxTokens: number; signal: AbortSignal }): Promise<Omit<Completion, 'tools'>> {
  try {
    // (nothing guessed for a call that asks one token: a priming of the prompt's start)
    slot.guesser?.expect(req.maxTokens > 1 ? req.schema : undefined);
    const before = slot.sequence.tokenMeter.getState();
    const guessedBefore = slot.sequence.tokenPredictions;
    const t0 = performance.now();
    let firstToken = 0;
    const onToken = () => (firstToken ||= performance.now());
    // An answer that ends in a loop is stopped there: returned cut off, as at max_tokens.
    const loop = loopWatch();
    const stopLoop = new AbortController();
    const onTextChunk = (chunk: string) => {
      if (loop.add(chunk)) stopLoop.abort();
    };
    const signal = AbortSignal.any([req.signal, stopLoop.signal]);
    const res = await slot.chat.generateResponse(req.prompt as never, { grammar: req.grammar, maxTokens: req.maxTokens, temperature: 0, signal, stopOnAbortSignal: true, onToken, onTextChunk });
    if (req.signal.aborted) throw new Error('the client went away');
    const after = slot.sequence.tokenMeter.getState();
    const guessed = slot.sequence.tokenPredictions;
    const completionTokens = after.usedOutputTokens - before.usedOutputTokens;
    const evaluated = after.usedInputTokens - before.usedInputTokens;
    const promptTokens = Math.max(evaluated, slot.sequence.contextTokens.length - completionTokens);
    const predicted = { validated: guessed.validated - guessedBefore.validated, refuted: guessed.refuted - guessedBefore.refuted };
    const ms = Math.round(performance.now() - t0);
    const promptMs = firstToken ? Math.round(firstToken - t0) : ms;
    return { text: res.response, stop: loop.looped ? 'loop' : res.metadata.stopReason, promptTokens, cachedTokens: promptTokens - evaluated, completionTokens, predicted, ms, promptMs };
  } finally {
    pool.release(slot);
  }
}

/** The chat-completions answer: the model's calls as tool_calls when tools were offered. */
function chatCompletion(out: Completion, modelName: string, log: Logger): Record<string, unknown> {
  let message: Record<string, unknown> = { role: 'assistant', content: out.text };
  let finish = out.stop === 'maxTokens' || out.stop === 'loop' ? 'length' : 'stop';
  if (out.tools.length) {
    try {
      const answer = parseAnswer(out.text, out.tools);
      const calls = answer.actions.map((a) => ({ id: `call_${randomUUID().slice(0, 12)}`, type: 'function', function: { name: a.name, arguments: a.arguments } }));
      message = { role: 'assistant', content: answer.thought || null, tool_calls: calls };
      finish = 'tool_calls';
    } catch (err) {
      // Cut off by max_tokens or a loop: returned as text, which the agent answers as a malformed call.
      // (one token asked for: a caller evaluating its prompt ahead of its calls)
      const asked = out.stop === 'maxTokens' && out.completionTokens <= 1;
      log[asked ? 'debug' : 'warn']({ err: (err as Error).message, stop: out.stop }, 'model answer is not a complete call');
    }
  }
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: modelName,
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: out.promptTokens, completion_tokens: out.completionTokens, total_tokens: out.promptTokens + out.completionTokens, prompt_tokens_details: { cached_tokens: out.cachedTokens } },
    // Where the call's time went (as llama.cpp's own server reports it): the prompt, then the answer.
    timings: { prompt_ms: out.promptMs, generation_ms: out.ms - out.promptMs, predicted_validated: out.predicted.validated, predicted_refuted: out.predicted.refuted },
  };
}

/** Whether the request carries the server's key (always, when it has none). */
export function authorized(header: string | undefined, apiKey: string | undefined): boolean {
  if (!apiKey) return true;
  const given = Buffer.from(/^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '');
  const want = Buffer.from(apiKey);
  return given.length === want.length && timingSafeEqual(given, want);
}

function requestHandler(opts: ModelServerOptions, loaded: Loaded) {
  const log = opts.logger;
  const complete = completer(loaded, opts);
  return async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (url === '/health' || url === '/v1/health')) return sendJson(res, 200, { status: 'ok' });
    if (!authorized(req.headers.authorization, opts.apiKey)) return sendJson(res, 401, { error: { message: 'A valid API key is required', type: 'invalid_request_error', code: 'invalid_api_key' } });
    if (req.method === 'GET' && url === '/v1/models') return sendJson(res, 200, { object: 'list', data: [{ id: loaded.modelName, object: 'model', owned_by: 'local' }] });
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
    log.info({ promptTokens: out.promptTokens, cachedTokens: out.cachedTokens, completionTokens: out.completionTokens, predicted: out.predicted, promptMs: out.promptMs, ms: out.ms }, 'completion');
    sendJson(res, 200, chatCompletion(out, loaded.modelName, log));
  };
}

export async function startModelServer(opts: ModelServerOptions): Promise<RunningModelServer> {
  const log = opts.logger;
  const loaded = await loadModel(opts);
  const handle = requestHandler(opts, loaded);
  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err) => {
      log.error({ err }, 'model request failed');
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'The model failed to answer', type: 'server_error' } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address() as { port: number };
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${address.port}/v1`;
  log.info({ url, authenticated: Boolean(opts.apiKey) }, 'model server listening');
  return {
    url,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await loaded.dispose();
    },
  };
}

interface ChatRequest {
  messages: WireMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
  /** `false`: the answer holds its actions alone, no thought before them (the agent has nothing for it to weigh). */
  thought?: boolean;
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
