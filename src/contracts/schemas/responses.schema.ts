/**
 * What the API answers, as zod schemas: the source of the OpenAPI document's response
 * bodies (and of the types of the handlers that use them).
 */
import { z } from 'zod';
import { PICTURE_SKIPS } from '../recording';

const iso = z.string().describe('ISO 8601 date-time');
const isoOrNull = iso.nullable();

export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.string().describe('What went wrong'),
    message: z.string().describe('The same text as error'),
    code: z.string().describe('INVALID_PARAMS, INVALID_PARAMETER, MISSING_REQUIRED_FIELD, UNAUTHORIZED, INVALID_API_KEY, INSUFFICIENT_BALANCE, SESSION_NOT_FOUND, ...'),
    details: z.record(z.string(), z.unknown()).optional().describe('e.g. {parameter, value, min, max} or {field}'),
  })
  .describe('Error envelope of every REST endpoint');

export const confirmationSchema = z.object({ success: z.literal(true), message: z.string() }).describe('Confirmation');

export const usageSchema = z
  .object({
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    total_tokens: z.number(),
    completion_time: z.number().describe('Execution seconds'),
    cost: z.number().describe('USD'),
    inputTokens: z.number().optional().describe('Only on TASK_TIMEOUT: same as prompt_tokens'),
    outputTokens: z.number().optional().describe('Only on TASK_TIMEOUT: same as completion_tokens'),
    proxy_bytes: z.number().optional().describe('Only for a session on a managed proxy: bytes relayed through it'),
    proxy_cost: z.number().optional().describe('Only for a session on a managed proxy: USD for those bytes (part of cost)'),
    replayed_steps: z.number().int().optional().describe('Only for a replay (replayOf): steps performed from the recording, without the model'),
    agent_steps: z.number().int().optional().describe('Only for a replay (replayOf): steps that needed the model (a repair, or the answer)'),
  })
  .describe('Usage of a task');

export const taskFileSchema = z.object({ source: z.string(), downloadUrl: z.string(), filename: z.string(), timestamp: z.number() });
export const taskNetworkSchema = z.object({ id: z.string(), taskId: z.string(), urls: z.array(z.object({ url: z.string(), timestamp: z.number() })) });

const ids = { sessionId: z.string(), taskId: z.string() };

/** The verdicts of a task's `verify` checks. */
export const verificationSchema = z
  .object({
    passed: z.boolean(),
    attempts: z.number().int().describe('Times the result was checked; the last one passed'),
    checks: z.array(
      z.object({
        check: z.enum(['urlMatches', 'textVisible', 'elementVisible', 'criteria']),
        value: z.string(),
        passed: z.boolean(),
        reason: z.string().describe("What the page showed, or the judge's reason (criteria)"),
      }),
    ),
  })
  .describe('Only for a task with verify: the checks its result passed');

export const taskCompletedSchema = z
  .object({
    success: z.literal(true),
    ...ids,
    type: z.literal('task_completed'),
    status: z.literal('task_completed'),
    data: z.object({ message: z.string(), files: z.array(taskFileSchema), network: z.array(taskNetworkSchema), verification: verificationSchema.optional() }),
    usage: usageSchema,
    completedAt: iso.optional().describe('In the poll response'),
  })
  .describe('Task result envelope');

export const taskFailedSchema = z
  .object({ success: z.literal(false), ...ids, status: z.literal('failed'), error: z.string(), code: z.string(), details: z.record(z.string(), z.unknown()).optional(), usage: usageSchema, completedAt: iso.optional() })
  .describe('Failed envelope');

export const guardrailSchema = z
  .object({ success: z.literal(true), ...ids, type: z.literal('guardrail_trigger'), status: z.literal('guardrail_trigger'), data: z.object({ type: z.string(), value: z.string() }), usage: usageSchema })
  .describe('Guardrail envelope: the agent needs a human; answer with a guardrail message');

export const taskProgressSchema = z
  .object({ success: z.literal(true), ...ids, status: z.enum(['running', 'paused', 'stopped']), usage: usageSchema, data: z.object({ message: z.string() }).optional().describe('Partial answer of a stopped task') })
  .describe('Running envelope (also paused and stopped)');

export const pendingSchema = z
  .object({ success: z.literal(true), ...ids, status: z.literal('pending'), pending: z.literal(true), pollUrl: z.string(), message: z.string() })
  .describe('Pending envelope: poll pollUrl');

/** The answer of send-message: a task's answer (newTask) or a confirmation (state, interaction, guardrail). */
export const sendMessageAnswerSchema = z.union([taskCompletedSchema, taskFailedSchema, guardrailSchema, taskProgressSchema, pendingSchema, confirmationSchema]);

/** A task as polling sees it. */
export const taskPollSchema = z.union([taskCompletedSchema, taskFailedSchema, guardrailSchema, taskProgressSchema]);
/** The answer of a task-starting call: the outcome within the inline wait, else the pending marker. */
export const taskAnswerSchema = z.union([taskCompletedSchema, taskFailedSchema, guardrailSchema, taskProgressSchema, pendingSchema]);

export const sessionResourceSchema = z
  .object({
    success: z.literal(true),
    sessionId: z.string(),
    taskId: z.string().optional().describe('When the session started with a task'),
    socketURL: z.string().describe('Socket.IO base address'),
    streaming: z.object({
      webRTCURL: z.string().describe('WHEP endpoint'),
      webViewURL: z.string().describe('Live view page'),
      dimensions: z.object({ width: z.number(), height: z.number() }),
    }),
    initialPrompt: z.string(),
    expiresIn: z.number().describe('Inactivity expiry, ms'),
    balance: z.number().describe('USD'),
    message: z.string(),
  })
  .describe('Session resource');

export const healthSchema = z.object({
  success: z.literal(true),
  status: z.enum(['healthy', 'degraded']),
  instancesAvailable: z.boolean(),
  instanceCount: z.number(),
  sessionsOpen: z.number(),
  timestamp: iso,
});

export const activeSocketsSchema = z.object({ success: z.literal(true), sessions: z.array(z.object({ sessionId: z.string(), sockets: z.number() })) });

export const sessionEventsSchema = z.object({
  success: z.literal(true),
  sessionId: z.string(),
  status: z.enum(['pending', 'active', 'orphaned', 'completed', 'terminated', 'expired', 'failed']),
  endReason: z.enum(['completed', 'terminated', 'expired', 'terminateOnCompletion', 'instance_lost']).optional(),
  events: z
    .array(
      z
        .object({ event: z.enum(['message', 'end_session', 'instance:disconnected', 'instance:reconnected']), sessionId: z.string(), seq: z.number(), timestamp: z.number() })
        .catchall(z.unknown())
        .describe('One event as the socket delivers it, with its Socket.IO event name'),
    )
    .describe('Oldest first'),
  lastSeq: z.number().describe('The seq to ask after next'),
  hasMore: z.boolean(),
});

const chatConnection = z.record(z.string(), z.unknown()).nullable().describe('Chat connection (provider and its non-secret fields)');
export const environmentSchema = z.object({
  _id: z.string(),
  userId: z.string(),
  name: z.string(),
  description: z.string().nullish(),
  status: z.enum(['empty', 'uploading', 'ready']),
  blobSize: z.number().nullish(),
  blobUploadedAt: isoOrNull.optional(),
  chat: chatConnection.optional(),
  createdAt: isoOrNull,
  updatedAt: isoOrNull,
});
export const attachedFileSchema = z.object({ fileId: z.string(), originalName: z.string(), size: z.number(), createdAt: isoOrNull });
export const uploadedFileSchema = z.object({ fileId: z.string(), originalName: z.string(), size: z.number() });

export const environmentCreatedSchema = z.object({ success: z.literal(true), message: z.string(), environment: environmentSchema.omit({ blobSize: true, blobUploadedAt: true, chat: true }) });
export const environmentListSchema = z.object({ success: z.literal(true), environments: z.array(environmentSchema) });
export const environmentOneSchema = z.object({ success: z.literal(true), environment: environmentSchema });
export const environmentUploadedSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  environment: z.object({ _id: z.string(), name: z.string(), status: z.string(), blobSize: z.number().nullish(), blobUploadedAt: isoOrNull }),
});
export const attachedFilesSchema = z.object({ success: z.literal(true), message: z.string().optional(), files: z.array(attachedFileSchema) });
export const chatSavedSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  chat: chatConnection,
  replies: z.record(z.string(), z.unknown()).nullable().optional().describe("Where the provider delivers replies (url, secret token, a note): shown only in this answer"),
});
export const uploadedFilesSchema = z.object({ success: z.literal(true), files: z.array(uploadedFileSchema) });

export const profileSchema = z.object({
  _id: z.string(),
  userId: z.string(),
  name: z.string(),
  description: z.string().nullish(),
  status: z.enum(['empty', 'uploading', 'ready']),
  blobSize: z.number().nullish(),
  blobUploadedAt: isoOrNull,
  lastUsedAt: isoOrNull,
  usageCount: z.number(),
  createdAt: isoOrNull,
  updatedAt: isoOrNull,
});
export const profileListSchema = z.object({ success: z.literal(true), profiles: z.array(profileSchema) });
export const profileOneSchema = z.object({ success: z.literal(true), message: z.string().optional(), profile: profileSchema });
export const signedLinkSchema = z.object({ success: z.literal(true), downloadUrl: z.string(), expiresAt: iso });

export const cronJobSchema = z
  .looseObject({
    _id: z.string(),
    userId: z.string(),
    name: z.string(),
    environmentId: z.string(),
    scheduleType: z.enum(['at', 'every', 'cron']),
    status: z.enum(['active', 'paused']),
    nextRunAt: isoOrNull,
    consecutiveFailures: z.number(),
    createdAt: isoOrNull,
  })
  .describe('Trigger (the fields of the create request, plus its state)');
export const triggerRunSchema = z
  .looseObject({ _id: z.string(), cronJobId: z.string(), status: z.enum(['running', 'completed', 'failed', 'timed_out', 'skipped']), createdAt: isoOrNull })
  .describe('One run of a trigger');
export const cronJobListSchema = z.object({ success: z.literal(true), cronJobs: z.array(cronJobSchema) });
export const cronJobOneSchema = z.object({ success: z.literal(true), cronJob: cronJobSchema });
export const cronJobWithRunsSchema = z.object({ success: z.literal(true), cronJob: cronJobSchema, recentRuns: z.array(triggerRunSchema) });
export const cronJobStateSchema = z.object({ success: z.literal(true), cronJob: z.looseObject({ _id: z.string(), status: z.enum(['active', 'paused']) }) });
export const runPageSchema = z.object({ success: z.literal(true), runs: z.array(triggerRunSchema), nextCursor: z.string().nullable() });
export const runOneSchema = z.object({ success: z.literal(true), run: triggerRunSchema });

export const webhookSecretSchema = z.object({
  success: z.literal(true),
  message: z.string().optional(),
  secret: z.string().describe('whsec_...'),
  createdAt: iso,
  previousSecretExpiresAt: isoOrNull,
});

export const storedFileSchema = z.object({
  fileId: z.string(),
  originalName: z.string(),
  size: z.number(),
  contentType: z.string().nullish(),
  source: z.enum(['upload', 'download']).describe('Uploaded by you, or downloaded by the agent during a task'),
  createdAt: iso,
  expiresAt: isoOrNull,
  sessionId: z.string().nullish().describe('Downloads only'),
  taskId: z.string().nullish().describe('Downloads only'),
  sourceUrl: z.string().nullish().describe('Downloads only: where the browser got it'),
});
export const filePageSchema = z.object({ success: z.literal(true), files: z.array(storedFileSchema), nextCursor: z.string().nullable() });

export const policySchema = z
  .looseObject({ _id: z.string(), userId: z.string(), name: z.string(), description: z.string().nullish(), createdAt: isoOrNull, updatedAt: isoOrNull })
  .describe('Automation policy (the fields of the create request, plus its identity)');
export const policyListSchema = z.object({ success: z.literal(true), policies: z.array(policySchema) });
export const policyOneSchema = z.object({ success: z.literal(true), policy: policySchema });

/** Answers of a chat provider's webhook: an acknowledgement, or the subscription challenge echoed. */
export const chatWebhookAckSchema = z.union([z.object({ ok: z.literal(true) }), z.object({ challenge: z.string() })]);

const elementDescriptionSchema = z
  .object({
    role: z.string(),
    name: z.string(),
    text: z.string().optional(),
    label: z.string().optional(),
    placeholder: z.string().optional(),
    testId: z.string().optional(),
    id: z.string().optional(),
    fieldName: z.string().optional(),
    tag: z.string(),
    inputType: z.string().optional(),
    css: z.string(),
    frame: z.object({ url: z.string(), name: z.string().optional() }).optional(),
    box: z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() }),
  })
  .describe('What an action acted on, described to find it again on a changed page: role and accessible name, text, label, placeholder, test id, id, field name, a CSS path, the frame, the box (last resort)');

export const recordedStepSchema = z.object({
  seq: z.number().int(),
  by: z.enum(['agent', 'human', 'replay']),
  action: z.string().describe('The agent tool (navigate, click_element, input_text, select_option, send_keys, upload_file, scroll, go_back, switch_tab, wait, extract, done, request_human_input) or manual_click, manual_double_click, manual_type, manual_key_press'),
  args: z.record(z.string(), z.unknown()).describe('The arguments; typed secrets as their placeholders <secret>name</secret>; a person typing into a secret field is recorded without the text'),
  element: elementDescriptionSchema.optional(),
  urlBefore: z.string(),
  urlAfter: z.string(),
  outcome: z.enum(['ok', 'failed', 'blocked']),
  error: z.string().optional(),
  summary: z.string().optional(),
  reasoning: z.string().optional(),
  pictureFileId: z.string().optional(),
  pictureSkipped: z.enum(PICTURE_SKIPS).optional().describe('Why the step has no picture: unchanged (the page showed what the last picture shows), busy (the worker was short of CPU: every other step), secret_fields, no_page, failed, quota, not_stored'),
  at: iso,
});

export const recordingDeletedSchema = z.object({
  success: z.literal(true),
  sessionId: z.string(),
  taskId: z.string(),
  deletedSteps: z.number().int().describe('Recorded steps removed'),
  deletedPictures: z.number().int().describe('Step pictures removed (their record page answers 404 from now on)'),
});

export const recordingSchema = z.object({
  success: z.literal(true),
  sessionId: z.string(),
  taskId: z.string(),
  status: z.string().describe('The task status'),
  replayOf: z.string().optional().describe('The task this one replayed'),
  pageUrl: z.string().describe('The step-by-step record page (a picture of the page after each step), signed for this task: no key needed'),
  steps: z.array(recordedStepSchema),
});

/** A JSON-RPC 2.0 error answer (the MCP endpoints): -32600 invalid request, -32603 session not found, -32700 parse error, -32000 transport errors. */
export const jsonRpcErrorSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number(), z.null()]).describe('The request\'s id, or null when there was no single request'),
    error: z.object({ code: z.number().int().describe('JSON-RPC error code'), message: z.string(), data: z.unknown().optional() }),
  })
  .describe('JSON-RPC 2.0 error');

/** One server-sent event as a client reads it: its type (`message` when the stream names none), its data, and the optional id and retry. */
export const sseEventSchema = <T extends string>(events: readonly [T, ...T[]]) =>
  z.object({
    event: z.enum(events),
    data: z.string(),
    id: z.string().optional(),
    retry: z.number().int().optional(),
  });
