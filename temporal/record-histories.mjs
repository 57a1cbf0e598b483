// Picks one closed workflow of each kind from a Temporal server (the test stack after the
// scenario tests ran) and writes its history, payloads decrypted, to temporal/histories/.
// Run by temporal/record-histories.sh; needs dist/ (npm run build) for the payload codec.
// Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, PAYLOAD_KEY_FILE (the stack's payload.key).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import codecModule from '../dist/temporal/codec.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(here, 'histories');
const key = Buffer.from(fs.readFileSync(process.env.PAYLOAD_KEY_FILE, 'utf8').trim(), 'hex');
const codec = new codecModule.EncryptionCodec(key);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
// The codec lets the listing read the workflows' memos; histories come back as stored (decrypted below).
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'browser-agent', dataConverter: { payloadCodecs: [codec] } });

/** Replaces every encrypted payload in the history by its plain form (recursively). */
async function decrypt(node) {
  if (Array.isArray(node)) {
    for (const item of node) await decrypt(item);
    return;
  }
  if (!node || typeof node !== 'object' || ArrayBuffer.isView(node)) return;
  for (const [k, v] of Object.entries(node)) {
    if (v && typeof v === 'object' && !ArrayBuffer.isView(v) && v.metadata && ArrayBuffer.isView(v.data)) {
      [node[k]] = await codec.decode([v]);
    } else if (Array.isArray(v) && v.length && v.every((p) => p && p.metadata && ArrayBuffer.isView(p.data))) {
      node[k] = await codec.decode(v);
    } else {
      await decrypt(v);
    }
  }
}

const events = (h) => h.events ?? [];
const has = (h, type) => events(h).some((e) => e[type]);
const updates = (h) => events(h).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).map((e) => e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name);
const activities = (h) => events(h).filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes.activityType?.name);
const count = (list, name) => list.filter((n) => n === name).length;
const completed = (h) => has(h, 'workflowExecutionCompletedEventAttributes');
const continuedAsNew = (h) => has(h, 'workflowExecutionContinuedAsNewEventAttributes');
const carried = (h) => Boolean(events(h)[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId);

/** Each recorded kind: its workflow type and what its history must show. */
const KINDS = {
  'session-tasks': { type: 'sessionWorkflow', match: (h) => completed(h) && count(activities(h), 'agentStep') >= 2 && !updates(h).some((u) => u === 'interaction' || u === 'guardrail') && !carried(h) },
  'session-takeover': { type: 'sessionWorkflow', match: (h) => completed(h) && updates(h).includes('interaction') && count(activities(h), 'agentStep') >= 1 },
  'session-guardrail': { type: 'sessionWorkflow', match: (h) => completed(h) && updates(h).includes('guardrail') && !activities(h).includes('hibernateBrowser') },
  // A wait for a person that let the browser go and woke on an answer.
  'session-hibernated': { type: 'sessionWorkflow', match: (h) => completed(h) && activities(h).includes('hibernateBrowser') && activities(h).includes('openBrowser') && updates(h).includes('guardrail') },
  // An idle session that let its browser go and woke for its next task.
  'session-idle-discarded': { type: 'sessionWorkflow', match: (h) => completed(h) && activities(h).includes('hibernateBrowser') && !updates(h).includes('guardrail') && updates(h).filter((u) => u === 'newTask').length >= 2 },
  'session-continue-as-new': { type: 'sessionWorkflow', match: (h) => continuedAsNew(h) && !carried(h) },
  'session-continued': { type: 'sessionWorkflow', match: (h) => completed(h) && carried(h) },
  // Restored on another worker (the test may leave it to be terminated).
  'session-worker-loss': { type: 'sessionWorkflow', match: (h) => count(activities(h), 'openBrowser') >= 2 && activities(h).includes('publishConnection') && !carried(h) },
  'trigger-run': { type: 'triggerRunWorkflow', match: (h) => completed(h) && activities(h).length > 0 },
  'webhook-delivery': { type: 'webhookDeliveryWorkflow', match: (h) => completed(h) },
  'chat-delivery': { type: 'chatDeliveryWorkflow', match: (h) => completed(h) },
};

// RECORD_KINDS=a,b records only those kinds (the others' files are kept as they are).
const only = process.env.RECORD_KINDS ? new Set(process.env.RECORD_KINDS.split(',')) : null;
if (only) for (const name of Object.keys(KINDS)) if (!only.has(name)) delete KINDS[name];
const found = {};
for await (const wf of client.workflow.list({ query: 'ExecutionStatus != "Running"' })) {
  const kinds = Object.entries(KINDS).filter(([, k]) => k.type === wf.type);
  if (!kinds.length) continue;
  const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
  await decrypt(history);
  for (const [name, kind] of kinds) {
    if (!kind.match(history)) continue;
    const size = events(history).length;
    // The shortest example of each kind keeps the files small.
    if (!found[name] || size < found[name].size) found[name] = { workflowId: wf.workflowId, history, size };
  }
}
fs.mkdirSync(outDir, { recursive: true });
for (const [name, { workflowId, history, size }] of Object.entries(found)) {
  // The History message as a plain object (bytes in base64, enums by name); the replay test
  // reads it back with History.fromObject.
  const History = proto.temporal.api.history.v1.History;
  const json = History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
  fs.writeFileSync(path.join(outDir, `${name}.json`), `${JSON.stringify({ workflowId, ...json }, null, 1)}\n`);
  console.log(`${name}: ${workflowId} (${size} events)`);
}
const missing = Object.keys(KINDS).filter((k) => !found[k]);
if (missing.length) console.log(`not found (kept as they were): ${missing.join(', ')}`);
await connection.close();
