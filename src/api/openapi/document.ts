/**
 * The OpenAPI 3.1 document served at GET /openapi.json, built from the same zod schemas
 * that validate requests (`z.toJSONSchema`, input side) and describe answers (output
 * side). The operation table below is the only hand-written part: which schema goes
 * with which method and path.
 */
import { z } from 'zod';
import { chatCompletionChunkSchema, chatCompletionRequestSchema, chatCompletionSchema, modelListSchema, modelSchema, openAiErrorSchema } from '../../contracts/schemas/chat.schema';
import { CRON_JOB_CONDITIONS, cronJobFieldsSchema } from '../../contracts/schemas/cron-job.schema';
import { guardrailMessageSchema, interactionMessageSchema, newTaskMessageSchema, stateMessageSchema } from '../../contracts/schemas/message.schema';
import * as R from '../../contracts/schemas/responses.schema';
import { runTaskSchema, startSessionSchema } from '../../contracts/schemas/session.schema';
import { NULL_IS_ABSENT, NULL_IS_DEFAULT } from '../../contracts/schemas/task.schema';
import { mcpToolInputSchemas } from '../mcp/tool-schemas';
import { mcpInitializeRequestSchema, mcpMessageSchema } from '../mcp/mcp.schemas';
import { policyRequestSchema } from '../../contracts/schemas/policy.schema';
import { chatConnectionRequestSchema } from '../../contracts/schemas/chat-connection.schema';
import { namedRequestSchema } from '../../contracts/schemas/named.schema';
import { sessionEventsQuerySchema } from '../../contracts/schemas/session.schema';
import { pageQuerySchema } from '../../contracts/cursor';
import { MAX_FILES_PER_REQUEST } from '../routes/files.routes';

/** Request bodies (read as input: defaults are optional). */
const REQUESTS = {
  StartSessionRequest: startSessionSchema,
  RunTaskRequest: runTaskSchema,
  SendMessageRequest: z.object({
    sessionId: z.string().min(1).describe('The session'),
    message: z.union([newTaskMessageSchema, stateMessageSchema, interactionMessageSchema, guardrailMessageSchema]).describe('newTask, state, interaction or guardrail'),
  }),
  NamedRequest: namedRequestSchema,
  ChatConnectionRequest: chatConnectionRequestSchema,
  CronJobCreateRequest: cronJobFieldsSchema.partial().required({ name: true, environmentId: true, scheduleType: true, prompt: true }).meta({ allOf: CRON_JOB_CONDITIONS }),
  CronJobUpdateRequest: cronJobFieldsSchema.partial(),
  ChatCompletionRequest: chatCompletionRequestSchema,
  PolicyRequest: policyRequestSchema.partial().required({ name: true }),
  PolicyUpdateRequest: policyRequestSchema.partial(),
  McpInitializeRequest: mcpInitializeRequestSchema,
  McpMessage: mcpMessageSchema,
} as const;

/** Response bodies (read as output). */
const RESPONSES = {
  ErrorEnvelope: R.errorEnvelopeSchema,
  Confirmation: R.confirmationSchema,
  Usage: R.usageSchema,
  SessionResource: R.sessionResourceSchema,
  TaskAnswer: R.taskAnswerSchema,
  SendMessageAnswer: R.sendMessageAnswerSchema,
  TaskPoll: R.taskPollSchema,
  Recording: R.recordingSchema,
  RecordingDeleted: R.recordingDeletedSchema,
  Health: R.healthSchema,
  ActiveSockets: R.activeSocketsSchema,
  SessionEvents: R.sessionEventsSchema,
  EnvironmentCreated: R.environmentCreatedSchema,
  EnvironmentList: R.environmentListSchema,
  EnvironmentOne: R.environmentOneSchema,
  EnvironmentUploaded: R.environmentUploadedSchema,
  AttachedFiles: R.attachedFilesSchema,
  ChatSaved: R.chatSavedSchema,
  UploadedFiles: R.uploadedFilesSchema,
  ProfileList: R.profileListSchema,
  ProfileOne: R.profileOneSchema,
  SignedLink: R.signedLinkSchema,
  CronJobList: R.cronJobListSchema,
  CronJobOne: R.cronJobOneSchema,
  CronJobWithRuns: R.cronJobWithRunsSchema,
  CronJobState: R.cronJobStateSchema,
  RunPage: R.runPageSchema,
  RunOne: R.runOneSchema,
  WebhookSecret: R.webhookSecretSchema,
  FilePage: R.filePageSchema,
  PolicyList: R.policyListSchema,
  PolicyOne: R.policyOneSchema,
  ChatWebhookAck: R.chatWebhookAckSchema,
  ChatCompletion: chatCompletionSchema,
  ChatCompletionChunk: chatCompletionChunkSchema,
  ModelList: modelListSchema,
  Model: modelSchema,
  OpenAiError: openAiErrorSchema,
  JsonRpcError: R.jsonRpcErrorSchema,
  McpStreamEvent: R.sseEventSchema(['message']).describe('An event of an MCP stream: data is one JSON-RPC message'),
  McpSseEvent: R.sseEventSchema(['endpoint', 'message']).describe('An event of the SSE transport: the first is endpoint (data: the path to POST messages to), then message (data: one JSON-RPC message)'),
  ChatCompletionEvent: R.sseEventSchema(['message']).describe('An event of a streamed chat completion: data is a ChatCompletionChunk as JSON, the last one [DONE]; progress comes as comments'),
} as const;

type RequestName = keyof typeof REQUESTS;
type ResponseName = keyof typeof RESPONSES;
type Body =
  | ResponseName
  | 'user-file'
  | 'gzip'
  | 'jpeg'
  | 'typescript'
  | 'asset'
  | 'html'
  | 'prometheus'
  | 'mcp-stream'
  | 'mcp-response'
  | 'mcp-sse'
  | 'sdp'
  | 'jpeg-stream'
  | 'none'
  | 'any-json'
  | 'text';

/** What an error status answers with: the REST envelope (or the OpenAI error under /v1), a JSON-RPC error, either, or nothing. */
type ErrorBody = 'envelope' | 'json-rpc' | 'envelope-or-json-rpc' | 'none';

interface Operation {
  method: 'get' | 'post' | 'put' | 'delete' | 'options';
  path: string;
  tag: string;
  summary: string;
  /** Bearer API key; `optional` when a signed token in the query works instead. */
  auth: boolean | 'optional';
  json?: RequestName;
  /** The JSON body may be left out (it is then `{}`). */
  jsonOptional?: boolean;
  /** Multipart files: the form field, whether it takes several (at most `maxItems`), and their media type. */
  multipart?: { field: string; many: boolean; contentType?: string };
  sdp?: boolean;
  /** Query parameters: hand-written, or the fields of the zod schema that parses them. */
  query?: { name: string; description: string; schema: Record<string, unknown> }[] | z.ZodObject;
  headers?: { name: string; description: string; required: boolean }[];
  ok: [number, Body];
  /** A JSON answer the success status may carry instead (e.g. the signed link of a download). */
  okJson?: ResponseName;
  /** Other success statuses and their bodies. */
  alsoOk?: [number, Body][];
  /** Error statuses; their bodies are the REST error envelope, or the OpenAI error for /v1, unless `errorBodies` says otherwise. */
  errors?: number[];
  errorBodies?: Partial<Record<number, ErrorBody>>;
  /** Errors answered with an empty body (a chat provider's webhook learns nothing from them). */
  bareErrors?: boolean;
}

const str = { type: 'string' };
const tokenQuery = (what: string) => ({ name: 'token', description: `Signed ${what} token (instead of the API key)`, schema: str });

export const OPERATIONS: Operation[] = [
  { method: 'get', path: '/start/health', tag: 'Sessions', summary: 'Health and browser workers', auth: false, ok: [200, 'Health'] },
  { method: 'post', path: '/start/start-session', tag: 'Sessions', summary: 'Start a session (optionally with a task)', auth: true, json: 'StartSessionRequest', jsonOptional: true, ok: [200, 'SessionResource'], errors: [400, 401, 402, 403, 404, 409, 429, 503] },
  { method: 'post', path: '/start/run-task', tag: 'Sessions', summary: 'Run one task in a new session that closes afterwards', auth: true, json: 'RunTaskRequest', ok: [200, 'TaskAnswer'], errors: [400, 401, 402, 403, 404, 409, 429, 503] },
  { method: 'post', path: '/start/send-message', tag: 'Sessions', summary: 'Send newTask, state, interaction or guardrail to a session', auth: true, json: 'SendMessageRequest', ok: [200, 'SendMessageAnswer'], errors: [400, 401, 402, 404, 409, 429, 503] },
  { method: 'get', path: '/start/active-sockets', tag: 'Sessions', summary: "The caller's live sessions and the sockets watching each", auth: true, ok: [200, 'ActiveSockets'], errors: [401] },
  {
    method: 'get',
    path: '/start/sessions/{sessionId}/events',
    tag: 'Sessions',
    summary: "A session's events after a seq: while it lives and for an hour after it ended (owner only)",
    auth: true,
    query: sessionEventsQuerySchema,
    ok: [200, 'SessionEvents'],
    errors: [400, 401, 404],
  },
  { method: 'get', path: '/task/{sessionId}/{taskId}', tag: 'Sessions', summary: 'Poll a task (the session id is the capability; no key needed)', auth: false, ok: [200, 'TaskPoll'], errors: [404] },
  {
    method: 'get',
    path: '/task/{sessionId}/{taskId}/recording',
    tag: 'Recordings',
    summary: "The task's recording: the actions performed, each with what it acted on (JSON), or a Playwright script that performs them again",
    auth: true,
    query: [{ name: 'format', description: 'json (default) or playwright (a @playwright/test TypeScript file; secrets from environment variables named after their placeholders)', schema: { type: 'string', enum: ['json', 'playwright'] } }],
    ok: [200, 'typescript'],
    okJson: 'Recording',
    errors: [400, 401, 404, 429],
  },
  {
    method: 'delete',
    path: '/task/{sessionId}/{taskId}/recording',
    tag: 'Recordings',
    summary: "Delete the task's recording: its steps and pictures; its record page and pictures answer 404 from then on (owner only; a running task's is 409)",
    auth: true,
    ok: [200, 'RecordingDeleted'],
    errors: [401, 404, 409, 429],
  },
  { method: 'get', path: '/recordings/{sessionId}/{taskId}', tag: 'Recordings', summary: "A task's step-by-step record: the picture after each step with its action, target, who did it and the agent's words (the recording's pageUrl)", auth: false, query: [tokenQuery('record page')], ok: [200, 'html'], errors: [404] },
  { method: 'get', path: '/recordings/{sessionId}/{taskId}/pictures/{seq}', tag: 'Recordings', summary: 'The JPEG picture of the page after one step', auth: false, query: [tokenQuery('record page')], ok: [200, 'jpeg'], errors: [404] },
  { method: 'get', path: '/view/{sessionId}', tag: 'Live', summary: 'Live view page of a session', auth: false, query: [tokenQuery('view')], ok: [200, 'html'], errors: [404] },
  { method: 'get', path: '/view/{sessionId}/stream', tag: 'Live', summary: 'MJPEG stream of the live view', auth: false, query: [tokenQuery('view')], ok: [200, 'jpeg-stream'], errors: [404] },
  { method: 'post', path: '/whep/{sessionId}', tag: 'Live', summary: 'WHEP: SDP offer in, SDP answer out (201, Location)', auth: false, sdp: true, query: [tokenQuery('view')], ok: [201, 'sdp'], errors: [400, 404, 415, 429] },
  { method: 'options', path: '/whep/{sessionId}', tag: 'Live', summary: 'CORS preflight of WHEP', auth: false, ok: [204, 'none'] },
  { method: 'options', path: '/whep/{sessionId}/{resourceId}', tag: 'Live', summary: 'CORS preflight of a WHEP resource', auth: false, ok: [204, 'none'] },
  { method: 'delete', path: '/whep/{sessionId}/{resourceId}', tag: 'Live', summary: 'End a WHEP playback', auth: false, query: [tokenQuery('view')], ok: [204, 'none'], errors: [404] },
  { method: 'post', path: '/environments', tag: 'Environments', summary: 'Create an environment (at most 20 per user)', auth: true, json: 'NamedRequest', ok: [200, 'EnvironmentCreated'], errors: [400, 401] },
  { method: 'get', path: '/environments', tag: 'Environments', summary: "The caller's environments", auth: true, ok: [200, 'EnvironmentList'], errors: [401] },
  { method: 'get', path: '/environments/{id}', tag: 'Environments', summary: 'One environment', auth: true, ok: [200, 'EnvironmentOne'], errors: [401, 404] },
  { method: 'delete', path: '/environments/{id}', tag: 'Environments', summary: 'Delete an environment, its profile data and files', auth: true, ok: [200, 'Confirmation'], errors: [401, 404] },
  { method: 'post', path: '/environments/{id}/upload', tag: 'Environments', summary: 'Upload the browser profile (.tar.gz, field "file")', auth: true, multipart: { field: 'file', many: false, contentType: 'application/gzip' }, ok: [200, 'EnvironmentUploaded'], errors: [400, 401, 404, 409, 413, 429] },
  { method: 'post', path: '/environments/{id}/files', tag: 'Environments', summary: 'Attach files (field "files", 1..20 of them)', auth: true, multipart: { field: 'files', many: true }, ok: [200, 'AttachedFiles'], errors: [400, 401, 404, 413, 429] },
  { method: 'get', path: '/environments/{id}/files', tag: 'Environments', summary: 'Files of an environment', auth: true, ok: [200, 'AttachedFiles'], errors: [401, 404] },
  { method: 'delete', path: '/environments/{id}/files/{fileId}', tag: 'Environments', summary: 'Remove a file', auth: true, ok: [200, 'Confirmation'], errors: [401, 404] },
  { method: 'put', path: '/environments/{id}/chat', tag: 'Environments', summary: 'Set the chat connection', auth: true, json: 'ChatConnectionRequest', ok: [200, 'ChatSaved'], errors: [400, 401, 404] },
  { method: 'delete', path: '/environments/{id}/chat', tag: 'Environments', summary: 'Remove the chat connection (success also when there is none)', auth: true, ok: [200, 'Confirmation'], errors: [401, 404] },
  { method: 'get', path: '/profiles', tag: 'Profiles', summary: "The caller's browser profiles", auth: true, ok: [200, 'ProfileList'], errors: [401, 429] },
  { method: 'post', path: '/profiles', tag: 'Profiles', summary: 'Create a profile', auth: true, json: 'NamedRequest', ok: [200, 'ProfileOne'], errors: [400, 401, 429] },
  { method: 'get', path: '/profiles/{id}', tag: 'Profiles', summary: 'One profile', auth: true, ok: [200, 'ProfileOne'], errors: [401, 404, 429] },
  { method: 'delete', path: '/profiles/{id}', tag: 'Profiles', summary: 'Delete a profile', auth: true, ok: [200, 'Confirmation'], errors: [401, 404, 429] },
  { method: 'post', path: '/profiles/{id}/upload', tag: 'Profiles', summary: 'Upload the profile archive (.tar.gz, field "file")', auth: true, multipart: { field: 'file', many: false, contentType: 'application/gzip' }, ok: [200, 'ProfileOne'], errors: [400, 401, 404, 409, 413, 429] },
  {
    method: 'get',
    path: '/profiles/{id}/download',
    tag: 'Profiles',
    summary: 'The profile archive (.tar.gz); with ?link=1 a signed link valid for one hour',
    auth: 'optional',
    query: [tokenQuery('download'), { name: 'link', description: 'Answer with a signed link instead of the archive (any value but false and 0)', schema: str }],
    ok: [200, 'gzip'],
    okJson: 'SignedLink',
    errors: [401, 404, 429],
  },
  { method: 'post', path: '/files/upload', tag: 'Files', summary: 'Upload files for tasks (field "files", 1..20 of them)', auth: true, multipart: { field: 'files', many: true }, ok: [200, 'UploadedFiles'], errors: [400, 401, 413, 429] },
  { method: 'get', path: '/files', tag: 'Files', summary: "The caller's uploads and captured downloads, newest first", auth: true, query: pageQuerySchema, ok: [200, 'FilePage'], errors: [400, 401] },
  { method: 'delete', path: '/files/{fileId}', tag: 'Files', summary: 'Delete one of your files', auth: true, ok: [200, 'Confirmation'], errors: [401, 404] },
  { method: 'get', path: '/chat/{provider}/{environmentId}', tag: 'Reach-out', summary: "A chat provider's subscription check (WhatsApp hub.challenge)", auth: false, ok: [200, 'text'], errors: [401, 404], bareErrors: true },
  { method: 'post', path: '/chat/{provider}/{environmentId}', tag: 'Reach-out', summary: "A chat provider's webhook: a reply answers the session's waiting guardrail (verified by the provider's signature or our secret token)", auth: false, ok: [200, 'ChatWebhookAck'], errors: [401, 404], bareErrors: true },
  { method: 'get', path: '/policies', tag: 'Policies', summary: "The caller's automation policies", auth: true, ok: [200, 'PolicyList'], errors: [401, 429] },
  { method: 'post', path: '/policies', tag: 'Policies', summary: 'Create an automation policy', auth: true, json: 'PolicyRequest', ok: [201, 'PolicyOne'], errors: [400, 401, 429] },
  { method: 'get', path: '/policies/{id}', tag: 'Policies', summary: 'One policy', auth: true, ok: [200, 'PolicyOne'], errors: [401, 404, 429] },
  { method: 'put', path: '/policies/{id}', tag: 'Policies', summary: 'Update any subset of a policy', auth: true, json: 'PolicyUpdateRequest', jsonOptional: true, ok: [200, 'PolicyOne'], errors: [400, 401, 404, 429] },
  { method: 'delete', path: '/policies/{id}', tag: 'Policies', summary: 'Delete a policy (409 while a trigger names it)', auth: true, ok: [200, 'Confirmation'], errors: [401, 404, 409, 429] },
  { method: 'get', path: '/files/{fileId}/download', tag: 'Files', summary: 'Download a file (owner key or signed token), with the media type it was stored with', auth: 'optional', query: [tokenQuery('download')], ok: [200, 'user-file'], errors: [401, 404] },
  { method: 'get', path: '/cron-jobs', tag: 'Triggers', summary: "The caller's triggers, newest first", auth: true, ok: [200, 'CronJobList'], errors: [401, 429] },
  { method: 'post', path: '/cron-jobs', tag: 'Triggers', summary: 'Create a trigger', auth: true, json: 'CronJobCreateRequest', ok: [201, 'CronJobOne'], errors: [400, 401, 404, 429] },
  { method: 'get', path: '/cron-jobs/{id}', tag: 'Triggers', summary: 'One trigger with its 10 most recent runs', auth: true, ok: [200, 'CronJobWithRuns'], errors: [401, 404, 429] },
  { method: 'put', path: '/cron-jobs/{id}', tag: 'Triggers', summary: 'Update any subset of the fields', auth: true, json: 'CronJobUpdateRequest', jsonOptional: true, ok: [200, 'CronJobOne'], errors: [400, 401, 404, 429] },
  { method: 'delete', path: '/cron-jobs/{id}', tag: 'Triggers', summary: 'Delete a trigger and its runs', auth: true, ok: [200, 'Confirmation'], errors: [401, 404, 429] },
  { method: 'post', path: '/cron-jobs/{id}/pause', tag: 'Triggers', summary: 'Pause', auth: true, ok: [200, 'CronJobState'], errors: [400, 401, 404, 429] },
  { method: 'post', path: '/cron-jobs/{id}/resume', tag: 'Triggers', summary: 'Resume', auth: true, ok: [200, 'CronJobState'], errors: [400, 401, 404, 429] },
  { method: 'post', path: '/cron-jobs/{id}/trigger', tag: 'Triggers', summary: 'Run now, in the background', auth: true, ok: [200, 'Confirmation'], errors: [401, 404, 429] },
  {
    method: 'get',
    path: '/cron-jobs/{id}/runs',
    tag: 'Triggers',
    summary: 'Run history, newest first',
    auth: true,
    query: [
      { name: 'limit', description: '1..100, default 20', schema: { type: 'integer', minimum: 1, maximum: 100 } },
      { name: 'cursor', description: 'nextCursor of the previous page', schema: str },
    ],
    ok: [200, 'RunPage'],
    errors: [400, 401, 404, 429],
  },
  { method: 'get', path: '/cron-jobs/{id}/runs/{runId}', tag: 'Triggers', summary: 'One run', auth: true, ok: [200, 'RunOne'], errors: [401, 404, 429] },
  { method: 'get', path: '/webhooks/secret', tag: 'Webhooks', summary: 'The signing secret of webhook deliveries', auth: true, ok: [200, 'WebhookSecret'], errors: [401, 429] },
  { method: 'post', path: '/webhooks/secret/rotate', tag: 'Webhooks', summary: 'Replace the signing secret (both sign for 24 hours)', auth: true, ok: [200, 'WebhookSecret'], errors: [401, 429] },
  { method: 'get', path: '/v1/models', tag: 'OpenAI-compatible', summary: 'The one model, service-browser-1', auth: true, ok: [200, 'ModelList'], errors: [401] },
  { method: 'get', path: '/v1/models/{model}', tag: 'OpenAI-compatible', summary: 'One model', auth: true, ok: [200, 'Model'], errors: [401, 404] },
  {
    method: 'post',
    path: '/v1/chat/completions',
    tag: 'OpenAI-compatible',
    summary: 'Run the last user message as a task in a new session; stream: true answers with server-sent events (ChatCompletionChunk lines, comments for progress, data: [DONE])',
    auth: true,
    json: 'ChatCompletionRequest',
    ok: [200, 'ChatCompletion'],
    errors: [400, 401, 402, 403, 422, 429, 503],
  },
  { method: 'get', path: '/openapi.json', tag: 'Meta', summary: 'This document', auth: false, ok: [200, 'any-json'] },
  { method: 'get', path: '/docs', tag: 'Meta', summary: 'API reference page', auth: false, ok: [200, 'html'] },
  { method: 'get', path: '/metrics', tag: 'Meta', summary: 'Service metrics for Prometheus (aggregate figures only; bearer METRICS_TOKEN when the operator set one)', auth: false, ok: [200, 'prometheus'], errors: [401] },
  { method: 'get', path: '/docs/assets/{file}', tag: 'Meta', summary: 'Assets of the reference page', auth: false, ok: [200, 'asset'], errors: [404] },
  {
    method: 'post',
    path: '/mcp',
    tag: 'MCP',
    summary:
      'MCP streamable HTTP. Without Mcp-Session-Id: the initialize request, answered with the Mcp-Session-Id header of a new MCP session. With it: any JSON-RPC message of that session (tools/list, tools/call, resources/list, resources/read, notifications); requests are answered as an event stream, notifications and responses with 202',
    auth: true,
    headers: [{ name: 'Mcp-Session-Id', description: 'The MCP session, from the answer to initialize (absent on initialize)', required: false }],
    json: 'McpInitializeRequest',
    ok: [200, 'mcp-response'],
    alsoOk: [[202, 'none']],
    errors: [400, 401, 404, 406, 413, 415, 429],
    errorBodies: { 400: 'envelope-or-json-rpc', 404: 'json-rpc', 406: 'json-rpc', 415: 'json-rpc', 429: 'json-rpc' },
  },
  {
    method: 'get',
    path: '/mcp',
    tag: 'MCP',
    summary: 'MCP streamable HTTP: the server-to-client event stream of an MCP session (one at a time)',
    auth: true,
    headers: [{ name: 'Mcp-Session-Id', description: 'The MCP session, from the answer to initialize', required: true }],
    ok: [200, 'mcp-stream'],
    errors: [400, 401, 404, 406, 409],
    errorBodies: { 400: 'json-rpc', 404: 'json-rpc', 406: 'json-rpc', 409: 'json-rpc' },
  },
  {
    method: 'delete',
    path: '/mcp',
    tag: 'MCP',
    summary: 'MCP streamable HTTP: end the MCP session',
    auth: true,
    headers: [{ name: 'Mcp-Session-Id', description: 'The MCP session, from the answer to initialize', required: true }],
    ok: [200, 'none'],
    errors: [400, 401, 404],
    errorBodies: { 400: 'json-rpc', 404: 'json-rpc' },
  },
  { method: 'get', path: '/mcp/sse', tag: 'MCP', summary: 'MCP SSE transport: the event stream (its first event names the message endpoint)', auth: true, ok: [200, 'mcp-sse'], errors: [401, 429], errorBodies: { 429: 'json-rpc' } },
  {
    method: 'post',
    path: '/mcp/messages',
    tag: 'MCP',
    summary: 'MCP SSE transport: a JSON-RPC message of the stream named by sessionId (its answer comes on the stream)',
    auth: true,
    query: z.object({ sessionId: z.string().min(1).describe('MCP session of the event stream') }),
    json: 'McpMessage',
    ok: [202, 'none'],
    errors: [400, 401, 404, 413],
    errorBodies: { 400: 'envelope-or-json-rpc', 404: 'json-rpc' },
  },
];

type Json = Record<string, unknown>;

/** Makes a schema (in place) also take null, keeping its default and description outside. */
function allowNull(schema: Json): void {
  const { default: dflt, description, ...rest } = schema;
  const nullable = (rest.anyOf as Json[] | undefined)?.some((s) => s.type === 'null') || rest.type === 'null' || (Array.isArray(rest.type) && rest.type.includes('null'));
  if (nullable) return;
  for (const key of Object.keys(schema)) delete schema[key];
  schema.anyOf = [rest, { type: 'null' }];
  if (dflt !== undefined) schema.default = dflt;
  if (description !== undefined) schema.description = description;
}

/** Fields where null is the field left out (orDefault, nullIsAbsent) take null, as input; the markers go. */
function markNullable(node: unknown, io: 'input' | 'output'): void {
  if (Array.isArray(node)) return node.forEach((n) => markNullable(n, io));
  if (!node || typeof node !== 'object') return;
  const js = node as Json;
  for (const value of Object.values(js)) markNullable(value, io);
  if (io === 'input' && js[NULL_IS_ABSENT]) {
    const required = (js.required as string[] | undefined) ?? [];
    for (const [name, property] of Object.entries((js.properties as Record<string, Json> | undefined) ?? {})) if (!required.includes(name)) allowNull(property);
  }
  const nullIsDefault = io === 'input' && js[NULL_IS_DEFAULT];
  delete js[NULL_IS_DEFAULT];
  delete js[NULL_IS_ABSENT];
  if (nullIsDefault) allowNull(js);
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      const js = ctx.jsonSchema as Json;
      // A z.custom() check of "an object" (the MCP SDK's schemas use one) is, in JSON, an object or an array.
      const def = (ctx.zodSchema as { _zod: { def: { type: string } } })._zod.def;
      if (def.type === 'custom' && Object.keys(js).length === 0) js.type = ['object', 'array'];
    },
  }) as Record<string, unknown>;
  markNullable(out, io);
  delete out.$schema;
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function content(body: Body): Record<string, unknown> | undefined {
  switch (body) {
    case 'none':
      return undefined;
    case 'text':
      return { 'text/plain': { schema: str } };
    case 'html':
      return { 'text/html': { schema: str } };
    case 'typescript':
      return { 'application/typescript': { schema: str } };
    case 'prometheus':
      return { 'text/plain': { schema: { type: 'string', description: 'Prometheus text exposition format 0.0.4' } } };
    case 'user-file':
      return { '*/*': { schema: { description: 'The file, with the media type it was uploaded or downloaded with' } } };
    case 'gzip':
      return { 'application/gzip': { schema: { type: 'string', contentMediaType: 'application/gzip' } } };
    case 'jpeg':
      return { 'image/jpeg': { schema: { type: 'string', contentMediaType: 'image/jpeg' } } };
    case 'asset':
      return Object.fromEntries(['text/css', 'text/javascript', 'image/png'].map((t) => [t, { schema: { type: 'string', contentMediaType: t } }]));
    case 'sdp':
      return { 'application/sdp': { schema: str } };
    case 'jpeg-stream':
      return { 'multipart/x-mixed-replace': { schema: str } };
    case 'mcp-stream':
      return { 'text/event-stream': { schema: ref('McpStreamEvent') } };
    case 'mcp-response':
      return { 'text/event-stream': { schema: ref('McpStreamEvent') } };
    case 'mcp-sse':
      return { 'text/event-stream': { schema: ref('McpSseEvent') } };
    case 'any-json':
      return { 'application/json': { schema: { type: 'object' } } };
    default:
      return { 'application/json': { schema: ref(body) } };
  }
}

const STATUS_TEXT: Record<number, string> = {
  202: 'Accepted (the answer, if any, comes on the event stream)',
  400: 'Invalid parameters or malformed JSON',
  401: 'Missing or invalid API key',
  402: 'Insufficient balance',
  403: 'Account deactivated',
  404: 'Not found (also another user\'s resource)',
  406: 'The client does not accept the answer\'s media types (application/json and text/event-stream)',
  409: 'Conflict (task already running, profile in use)',
  413: 'Too large',
  415: 'Unsupported media type',
  422: 'The task ended without an answer: a guardrail (guardrail_error) or a failure (task_error)',
  429: 'Rate or session limit reached',
  503: 'No browser instance available',
};

function errorContent(op: Operation, status: number): Record<string, unknown> | undefined {
  const kind: ErrorBody = op.bareErrors ? 'none' : (op.errorBodies?.[status] ?? 'envelope');
  const envelope = ref(op.path.startsWith('/v1/') ? 'OpenAiError' : 'ErrorEnvelope');
  switch (kind) {
    case 'none':
      return undefined;
    case 'json-rpc':
      return { 'application/json': { schema: ref('JsonRpcError') } };
    case 'envelope-or-json-rpc':
      return { 'application/json': { schema: { anyOf: [envelope, ref('JsonRpcError')] } } };
    default:
      return { 'application/json': { schema: envelope } };
  }
}

/** The query parameters of an operation: hand-written, or one per field of its zod schema (as the route reads them). */
function queryParameters(op: Operation): Record<string, unknown>[] {
  if (!op.query) return [];
  if (Array.isArray(op.query)) return op.query.map((q) => ({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema }));
  const object = jsonSchema(op.query, 'input') as { properties: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(object.properties).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return { name, in: 'query', required: object.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest };
  });
}

/** The named request, response and MCP tool input schemas, as JSON Schema. */
function componentSchemas(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(REQUESTS)) schemas[name] = jsonSchema(s, 'input');
  for (const [name, s] of Object.entries(RESPONSES)) schemas[name] = jsonSchema(s, 'output');
  for (const [name, s] of Object.entries(mcpToolInputSchemas())) schemas[`McpTool_${name}`] = jsonSchema(s, 'input');
  return schemas;
}

/** An operation's parameters: its path's, its query's and its headers. */
function operationParameters(op: Operation): Record<string, unknown>[] {
  return [
    ...[...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: str })),
    ...queryParameters(op),
    ...(op.headers ?? []).map((h) => ({ name: h.name, in: 'header', required: h.required, description: h.description, schema: { type: 'string', minLength: 1 } })),
  ];
}

/** An operation's responses: its successes, then its errors (413 wherever a JSON body is read). */
function operationResponses(op: Operation): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, body] of [op.ok, ...(op.alsoOk ?? [])]) {
    const media = content(body);
    responses[String(status)] = { description: STATUS_TEXT[status] ?? 'Success', ...(media ? { content: media } : {}) };
  }
  if (op.path === '/v1/chat/completions') {
    // With stream: true, events `data: <ChatCompletionChunk>`, comments `: <progress>`, then `data: [DONE]`.
    (responses['200'] as { content: Record<string, unknown> }).content['text/event-stream'] = { schema: ref('ChatCompletionEvent') };
  }
  if (op.okJson) (responses[String(op.ok[0])] as { content: Record<string, unknown> }).content['application/json'] = { schema: ref(op.okJson) };
  // A JSON body over the size limit is 413 wherever a JSON body is read.
  const errors = op.json && !op.errors?.includes(413) ? [...(op.errors ?? []), 413].sort((a, b) => a - b) : (op.errors ?? []);
  for (const status of errors) {
    const media = errorContent(op, status);
    responses[String(status)] = { description: STATUS_TEXT[status] ?? 'Error', ...(media ? { content: media } : {}) };
  }
  return responses;
}

/** The multipart body of an upload: its one field of files, each part with a file name. */
function multipartBody(multipart: NonNullable<Operation['multipart']>): Record<string, unknown> {
  // A file part is bytes, whatever they are: no JSON type (a type check on a file's content means nothing on the wire).
  const file = { contentMediaType: 'application/octet-stream', description: multipart.contentType === 'application/gzip' ? 'A .tar.gz archive' : 'A file, any content' };
  const field = multipart.field;
  // Parts other than the field are read and dropped; each file part needs a file name (a part without one is a form field).
  const schema = { type: 'object', required: [field], additionalProperties: false, properties: { [field]: multipart.many ? { type: 'array', items: file, minItems: 1, maxItems: MAX_FILES_PER_REQUEST } : file } };
  const archive = multipart.contentType === 'application/gzip';
  const disposition = { description: 'form-data with the file name', schema: str, example: `form-data; name="${field}"; filename="${archive ? 'profile.tar.gz' : 'notes.txt'}"` };
  return {
    required: true,
    content: { 'multipart/form-data': { schema, encoding: { [field]: { ...(multipart.contentType ? { contentType: multipart.contentType } : {}), headers: { 'Content-Disposition': disposition } } } } },
  };
}

/** One operation of the document. */
function operationObject(op: Operation): Record<string, unknown> {
  const params = operationParameters(op);
  const responses = operationResponses(op);
  const operation: Record<string, unknown> = {
    operationId: operationId(op),
    tags: [op.tag],
    summary: op.summary,
    ...(params.length ? { parameters: params } : {}),
    security: op.auth === true ? [{ bearerAuth: [] }] : op.auth === 'optional' ? [{ bearerAuth: [] }, {}] : [],
    responses,
  };
  if (op.json) operation.requestBody = { required: !op.jsonOptional, content: { 'application/json': { schema: ref(op.json) } } };
  if (op.multipart) operation.requestBody = multipartBody(op.multipart);
  if (op.sdp) operation.requestBody = { required: true, content: { 'application/sdp': { schema: str } } };
  return operation;
}

/** The document; `serverUrl` is the public base address. */
export function buildOpenApiDocument(serverUrl: string): Record<string, unknown> {
  const schemas = componentSchemas();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operationObject(op);

  return {
    openapi: '3.1.0',
    info: {
      title: 'Browser agent service',
      version: '1',
      description:
        'An AI agent drives a real Chromium browser from a prompt. Sessions, tasks, live view, environments, profiles, files, triggers and webhooks, an OpenAI-compatible chat endpoint and an MCP server. Live events come over Socket.IO at the base address (handshake auth {sessionId}); they are not described here.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(OPERATIONS.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key (bas_...)' } }, schemas },
  };
}

function operationId(op: Operation): string {
  const words = op.path
    .split('/')
    .filter(Boolean)
    .map((w) => (w.startsWith('{') ? `by ${w.slice(1, -1)}` : w))
    .join(' ')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [op.method, ...words].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}
