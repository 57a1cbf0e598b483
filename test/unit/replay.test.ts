/**
 * Replays the recorded histories of temporal/histories/ (one per kind of workflow: a
 * session with tasks, a takeover, a guardrail, continue-as-new, a lost worker, a trigger
 * run, deliveries) against the workflow code as it is now. A change that running workflows
 * could not follow (a command added, removed or reordered without wf.patched) fails here.
 * No server needed. To record them again: bash temporal/record-histories.sh (see README).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { FAILURE_CONVERTER_PATH } from '../../src/temporal/connection';

const DIR = path.resolve(__dirname, '../../temporal/histories');
const files = fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort() : [];

it('has a recorded history of each kind of workflow', () => {
  expect(files.map((f) => f.replace(/\.json$/, ''))).toEqual(
    expect.arrayContaining(['session-tasks', 'session-takeover', 'session-guardrail', 'session-continue-as-new', 'session-worker-loss', 'trigger-run', 'webhook-delivery', 'chat-delivery']),
  );
});

it('replays every recorded history with the current workflow code', async () => {
  const histories = files.map((f) => {
    const { workflowId, ...history } = JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as { workflowId: string };
    return { workflowId: `${f}:${workflowId}`, history: temporal.api.history.v1.History.fromObject(history) };
  });
  const results = Worker.runReplayHistories(
    { workflowsPath: require.resolve('../../src/workflows'), dataConverter: { failureConverterPath: FAILURE_CONVERTER_PATH }, replayName: 'recorded-histories' },
    histories,
  );
  const failures: string[] = [];
  let replayed = 0;
  for await (const r of results) {
    replayed++;
    if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
  }
  expect(failures).toEqual([]);
  expect(replayed).toBe(files.length);
}, 120_000);
