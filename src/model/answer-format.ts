/**
 * What the local model may answer, and how a chat-completions request becomes its prompt.
 * Pure: no model, no I/O. The answer is one JSON object
 * `{"thought": "...", "actions": [{"name": "<tool>", "arguments": {...}}, ...]}` whose
 * `arguments` follow the named tool's parameter schema: every answer is one or a few
 * well-formed calls of offered tools, performed in the order given.
 */

/** A JSON Schema as the tools carry it (zod's output, a caller's outputSchema). */
export type JsonSchema = Record<string, unknown>;

/** A schema no value satisfies (an empty enum): a tool that needs one cannot be chosen. */
export const IMPOSSIBLE = { impossible: true } as const;

/**
 * On an `index` bound to the elements of a page: their labels by index. The model then names
 * an element by its label, then its index (`Submit [4]`), so the words it writes are those of
 * the element it means (choosing a bare number, a small model often took the one beside it).
 * The answer is read back to the index.
 */
export const ELEMENT_LABELS = 'x-element-labels';
const ELEMENT_LABEL_MAX = 40;

/** How the model names element `index` labelled `label`. */
export function elementChoice(index: number, label: string): string {
  const clean = label.replace(/[\u0000-\u001f"\\]/g, ' ').replace(/\s+/g, ' ').trim();
  const clipped = clean.length > ELEMENT_LABEL_MAX ? `${clean.slice(0, ELEMENT_LABEL_MAX - 1).trimEnd()}…` : clean;
  return `${clipped ? `${clipped} ` : ''}[${index}]`;
}

/** The labels an `index` schema carries, if it does. */
function labelsOf(s: JsonSchema): Record<string, string> | undefined {
  const labels = s[ELEMENT_LABELS];
  return s.type === 'integer' && Array.isArray(s.enum) && labels && typeof labels === 'object' ? (labels as Record<string, string>) : undefined;
}

/** The subset of JSON Schema the grammar builder understands (node-llama-cpp's GbnfJsonSchema). */
export type GrammarSchema =
  | { type: Primitive | Primitive[] }
  | { type: 'string'; minLength?: number; maxLength?: number }
  | { type: 'string'; format: 'date-time' | 'time' | 'date' }
  | { const: string | number | boolean | null }
  | { enum: (string | number | boolean | null)[] }
  | { oneOf: GrammarSchema[] }
  | { type: 'object'; properties: Record<string, GrammarSchema>; additionalProperties?: boolean | GrammarSchema }
  | { type: 'array'; items?: GrammarSchema; minItems?: number; maxItems?: number }
  | typeof IMPOSSIBLE;
type Primitive = 'string' | 'number' | 'integer' | 'boolean' | 'null';

export interface OfferedTool {
  name: string;
  description?: string;
  parameters?: JsonSchema;
}

/**
 * The thought is one short sentence: bounded so a model cannot ramble through its budget
 * (each of its tokens is a pass of the model: most of a step's time on a CPU).
 */
export const THOUGHT_MAX_CHARS = 240;
/** Actions one answer may list (the fields of a form, then its submit). */
export const MAX_ACTIONS = 4;

export interface AnswerShape {
  /** The thought's bound in characters; 0 leaves the thought out. */
  thoughtMaxChars?: number;
  maxActions?: number;
}
/** The grammar's longest length bound (llama.cpp refuses grammars with larger repetitions); longer bounds are left to max_tokens. */
const LENGTH_BOUND_MAX = 500;
const MAX_DEPTH = 8;
/** How deep a value of any shape may nest (each level doubles the grammar's rules). */
const ANY_DEPTH = 3;

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const FORMATS = new Set(['date-time', 'time', 'date']);

/** Any JSON value, to a bounded depth (what `{}` or an unsupported keyword allows). */
function anyValue(depth: number): GrammarSchema {
  const scalars: GrammarSchema = { type: ['string', 'number', 'boolean', 'null'] };
  if (depth >= ANY_DEPTH) return scalars;
  return { oneOf: [scalars, { type: 'array', items: anyValue(depth + 1) }, { type: 'object', properties: {}, additionalProperties: anyValue(depth + 1) }] };
}

/**
 * A tool's parameter schema as the grammar can enforce it. The grammar writes every property
 * of an object, so an optional one may be `null` (taken as left out by `argumentsOf`).
 */
export function toGrammarSchema(schema: unknown, depth = 0): GrammarSchema {
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return anyValue(depth);
  const s = schema as JsonSchema;
  if (acceptsNothing(s)) return IMPOSSIBLE;
  const labels = labelsOf(s);
  if (labels) return (s.enum as number[]).length ? { enum: (s.enum as number[]).map((index) => elementChoice(index, labels[index] ?? '')) } : IMPOSSIBLE;
  if ('const' in s && isScalar(s.const)) return { const: s.const };
  if (Array.isArray(s.enum) && s.enum.length === 0) return IMPOSSIBLE;
  if (Array.isArray(s.enum) && s.enum.every(isScalar)) return { enum: s.enum as (string | number | boolean | null)[] };
  const alternatives = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as unknown[] | undefined;
  if (alternatives?.length) return alternatives.length === 1 ? toGrammarSchema(alternatives[0], depth) : { oneOf: alternatives.map((a) => toGrammarSchema(a, depth + 1)) };
  const type = s.type;
  if (Array.isArray(type)) {
    if (type.every((t) => PRIMITIVES.has(String(t)))) return { type: type as Primitive[] };
    return { oneOf: type.map((t) => toGrammarSchema({ ...s, type: t }, depth + 1)) };
  }
  switch (type) {
    case 'string': {
      if (typeof s.format === 'string' && FORMATS.has(s.format)) return { type: 'string', format: s.format as 'date-time' };
      const maxLength = typeof s.maxLength === 'number' && s.maxLength <= LENGTH_BOUND_MAX ? s.maxLength : undefined;
      const minLength = typeof s.minLength === 'number' ? Math.min(s.minLength, maxLength ?? LENGTH_BOUND_MAX) : undefined;
      return { type: 'string', ...(minLength ? { minLength } : {}), ...(maxLength !== undefined ? { maxLength } : {}) };
    }
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type };
    case 'array': {
      const items = s.items && typeof s.items === 'object' && !Array.isArray(s.items) ? toGrammarSchema(s.items, depth + 1) : anyValue(depth + 1);
      return {
        type: 'array',
        items,
        ...(typeof s.minItems === 'number' ? { minItems: s.minItems } : {}),
        ...(typeof s.maxItems === 'number' ? { maxItems: s.maxItems } : {}),
      };
    }
    case 'object':
      return objectSchema(s, depth);
    default:
      if (s.properties && typeof s.properties === 'object') return objectSchema(s, depth);
      return anyValue(depth);
  }
}

function objectSchema(s: JsonSchema, depth: number): GrammarSchema {
  const props = (s.properties && typeof s.properties === 'object' ? s.properties : {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const properties: Record<string, GrammarSchema> = {};
  for (const [key, value] of Object.entries(props)) {
    const inner = toGrammarSchema(value, depth + 1);
    if (inner === IMPOSSIBLE && required.has(key)) return IMPOSSIBLE;
    properties[key] = inner === IMPOSSIBLE ? { type: 'null' } : required.has(key) ? inner : { oneOf: [inner, { type: 'null' }] };
  }
  const extra = s.additionalProperties;
  if (Object.keys(properties).length === 0 && extra !== false) {
    return { type: 'object', properties: {}, additionalProperties: extra && typeof extra === 'object' ? toGrammarSchema(extra, depth + 1) : anyValue(depth + 1) };
  }
  return { type: 'object', properties };
}

/** `not: {}`: no value is valid (a tool made unavailable for one answer). */
const acceptsNothing = (s: JsonSchema): boolean => typeof s.not === 'object' && s.not !== null && Object.keys(s.not).length === 0;

const isScalar = (v: unknown): v is string | number | boolean | null => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/**
 * The whole answer: a thought, then one or more calls of offered tools. The thought comes
 * first and outside the tools' alternatives, so while it is written the grammar follows one
 * path instead of one per tool (with 13 tools side by side every token cost 13 times the
 * grammar's work); the alternatives part at each call's name.
 */
export function answerSchema(tools: OfferedTool[], shape: AnswerShape = {}): GrammarSchema {
  const calls = tools.flatMap((t): GrammarSchema[] => {
    const args = toGrammarSchema(t.parameters ?? { type: 'object', properties: {} });
    // A tool whose required argument no value satisfies (no element on the page to name) is left out.
    return args === IMPOSSIBLE ? [] : [{ type: 'object', properties: { name: { const: t.name }, arguments: args } }];
  });
  const thoughtMax = shape.thoughtMaxChars ?? THOUGHT_MAX_CHARS;
  const call = calls.length === 1 ? calls[0] : { oneOf: calls };
  const actions: GrammarSchema = { type: 'array', items: call, minItems: 1, maxItems: Math.max(1, shape.maxActions ?? MAX_ACTIONS) };
  return { type: 'object', properties: { ...(thoughtMax > 0 ? { thought: { type: 'string', maxLength: thoughtMax } } : {}), actions } };
}

export interface ParsedCall {
  name: string;
  /** The arguments as JSON text, the `null`s the grammar wrote for left-out properties removed. */
  arguments: string;
}

export interface ParsedAnswer {
  thought: string;
  /** The calls in the order given: at least one. */
  actions: ParsedCall[];
}

/** Reads the model's answer (already constrained by the grammar, checked again here). */
export function parseAnswer(text: string, tools: OfferedTool[]): ParsedAnswer {
  const value = JSON.parse(text) as { thought?: unknown; actions?: unknown };
  if (typeof value !== 'object' || value === null) throw new Error('the answer is not a JSON object');
  const list = Array.isArray(value.actions) ? (value.actions as unknown[]) : [];
  if (!list.length) throw new Error('the answer names no action');
  const actions = list.map((item) => {
    const action = (item && typeof item === 'object' ? item : {}) as { name?: unknown; arguments?: unknown };
    const name = typeof action.name === 'string' ? action.name : '';
    if (!tools.some((t) => t.name === name)) throw new Error(`the answer names no offered tool (${JSON.stringify(action.name)})`);
    const args = action.arguments && typeof action.arguments === 'object' && !Array.isArray(action.arguments) ? withoutNulls(action.arguments as Record<string, unknown>) : {};
    return { name, arguments: JSON.stringify(withIndexes(args, tools.find((t) => t.name === name)!)) };
  });
  return { thought: typeof value.thought === 'string' ? value.thought.trim() : '', actions };
}

/** Elements named as `label [index]` read back to their index. */
function withIndexes(args: Record<string, unknown>, tool: OfferedTool): Record<string, unknown> {
  const props = (tool.parameters?.properties ?? {}) as Record<string, JsonSchema>;
  const out = { ...args };
  for (const [key, value] of Object.entries(args)) {
    const index = typeof value === 'string' && props[key] && labelsOf(props[key]) ? /\[(\d+)\]$/.exec(value)?.[1] : undefined;
    if (index !== undefined) out[key] = Number(index);
  }
  return out;
}

/** Top-level `null` arguments are properties left out (the grammar writes every property). */
function withoutNulls(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

/** The offered tools as the model reads them: one compact line each, its arguments with types. */
export function describeTools(tools: OfferedTool[], shape: AnswerShape = {}): string {
  const lines = tools.map((t) => {
    const params = (t.parameters?.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(t.parameters?.required) ? (t.parameters!.required as string[]) : []);
    const args = Object.entries(params).map(([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${typeLabel(v)}${typeof v.description === 'string' ? ` (${v.description})` : ''}`);
    return `- ${t.name}(${args.join('; ')}): ${t.description ?? ''}`.trim();
  });
  return [
    'Tools:',
    ...lines,
    '',
    answerInstruction(shape),
  ].join('\n');
}

function answerInstruction(shape: AnswerShape): string {
  const thought = (shape.thoughtMaxChars ?? THOUGHT_MAX_CHARS) > 0 ? '"thought": "<one short sentence: what you see and what you do next>", ' : '';
  const several = (shape.maxActions ?? MAX_ACTIONS) > 1 ? ' List several actions only when none changes the page before the next (the fields of a form, then its submit); done only alone.' : '';
  return `Answer with one JSON object: {${thought}"actions": [{"name": "<tool>", "arguments": {...}}]}. Arguments marked ? may be null.${several}`;
}

function typeLabel(s: JsonSchema): string {
  // An integer enum is a list of element indexes bound to the page: described as the integer it
  // is, so the tools' text (the start of the prompt) stays the same from step to step.
  if (labelsOf(s)) return '"<label> [index]"';
  if (Array.isArray(s.enum) && s.type === 'integer') return 'integer';
  if (Array.isArray(s.enum)) return s.enum.map((e) => JSON.stringify(e)).join('|');
  if (Array.isArray(s.anyOf)) return (s.anyOf as JsonSchema[]).map(typeLabel).join('|');
  if (Array.isArray(s.type)) return s.type.join('|');
  if (s.type === 'array') return `${s.items && typeof s.items === 'object' ? typeLabel(s.items as JsonSchema) : 'any'}[]`;
  if (s.type === 'object' && s.properties) return `{${Object.keys(s.properties as object).join(', ')}}`;
  return typeof s.type === 'string' ? s.type : 'any';
}

/** A chat-completions message as the server receives it. */
export interface WireMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
  tool_call_id?: string;
  name?: string;
}

/** The prompt as node-llama-cpp's chat history: a system text, then user and model turns alternating. */
export type PromptItem = { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };

function textOf(content: WireMessage['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : p.type === 'image_url' ? '[image]' : '')).join('\n');
  return '';
}

/** A user turn that shows the page (the agent's observations start so). */
const OBSERVATION = /^Observation \(/;
const STEP_RESULT_MAX_CHARS = 300;

/**
 * The request as the model's prompt: the system text with the tools, then ONE user turn that
 * holds the task, the steps so far as a numbered list (each call with its result) and the
 * latest observation last. A small model shown its own earlier answers as model turns copies
 * them: with the conversation as turns, the default model answered the same call again at
 * every step in each of the 5 easy tasks it ran. The list only grows at its end, so the
 * evaluated prefix (system, tools, task, earlier steps) is reused from step to step.
 */
export function toPrompt(messages: WireMessage[], tools: OfferedTool[], shape: AnswerShape = {}): PromptItem[] {
  const system: string[] = [];
  const body: string[] = [];
  const steps = new Map<string, number>();
  let stepCount = 0;
  let latest = '';
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(textOf(m.content));
    } else if (m.role === 'user') {
      const text = textOf(m.content);
      if (OBSERVATION.test(text)) latest = text;
      else body.push(text);
    } else if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).filter((c) => c.function?.name);
      if (!calls.length) {
        const said = textOf(m.content).trim();
        if (said) body.push(`(You answered without an action: ${clipLine(said)})`);
        continue;
      }
      for (const call of calls) {
        if (!stepCount) body.push('Steps so far:');
        stepCount += 1;
        body.push(`${stepCount}. ${call.function!.name} ${compactArgs(call.function!.arguments)} →`);
        if (call.id) steps.set(call.id, body.length - 1);
      }
    } else if (m.role === 'tool') {
      const at = m.tool_call_id !== undefined ? steps.get(m.tool_call_id) : undefined;
      if (at !== undefined) body[at] += ` ${clipLine(textOf(m.content))}`;
      else body.push(clipLine(textOf(m.content)));
    }
  }
  if (latest) body.push(latest);
  const items: PromptItem[] = body.length ? [{ type: 'user', text: body.join('\n') }] : [];
  const toolText = tools.length ? `\n\n${describeTools(tools, shape)}` : '';
  return [{ type: 'system', text: `${system.join('\n\n')}${toolText}`.trim() }, ...items];
}

function clipLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > STEP_RESULT_MAX_CHARS ? `${flat.slice(0, STEP_RESULT_MAX_CHARS - 1)}…` : flat;
}

function compactArgs(raw: string | undefined): string {
  try {
    return JSON.stringify(JSON.parse(raw || '{}'));
  } catch {
    return raw ?? '{}';
  }
}
