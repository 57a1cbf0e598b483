/**
 * Size of a session's Temporal history after a 100-step task with a 50,000-character
 * prompt, following two earlier tasks with prompts of the same length (their summaries are
 * the "previous tasks" context), through the real stack. Counts the events and the bytes
 * of the history as Temporal stores it (all runs of the session, should it continue as
 * new), and the bytes of the agent steps' inputs.
 * Writes JSON to BENCH_HISTORY_OUT (scripts/bench.sh prints it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startFixtureServer } from '../test/support/fixtures-server';
import { api } from '../test/support/http';
import { registerScript, startScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService } from '../test/support/service';

const STEPS = Number(process.env.BENCH_HISTORY_STEPS ?? 100);
const PROMPT_CHARS = 50_000;
const usage = { prompt_tokens: 100, completion_tokens: 5 };

it('history size of a long task', async () => {
  const model = await startScriptedModel();
  const fixtures = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_FIXTURES_URL = fixtures.url;
  process.env.TEST_LLM_BASE_URL = model.url;
  const service = await startService({ LOG_LEVEL: 'warn', TEMPORAL_TASK_QUEUE: `bench-history-${Date.now()}`, INLINE_WAIT_MS: '300000', RATE_LIMIT_PER_MINUTE: '1000' });
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    const { apiKey: key } = await createUser({ balance: 100 });
    const prompt = (token: string, what: string) => `${token} ${what} `.padEnd(PROMPT_CHARS, 'Keep scrolling and read the page carefully. ');
    const s = (await api(service.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
    const send = async (text: string) => {
      const r = await api(service.baseUrl, 'POST', '/start/send-message', {
        key,
        body: { sessionId: s.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: text, startingUrl: `${fixtures.url}/index.html`, maxInputTokens: 100_000 } },
      });
      if (r.body.type !== 'task_completed') throw new Error(`task did not complete: ${r.text}`);
    };
    for (let i = 0; i < 2; i++) {
      const token = `[bench-history-prev-${i}-${Date.now()}]`;
      await registerScript(model.url, { match: token, steps: [{ tool: 'done', args: { message: `earlier task ${i} done` }, usage }] });
      await send(prompt(token, `earlier task ${i}`));
    }
    const token = `[bench-history-long-task-${Date.now()}]`; // longer than the earlier tokens its context also holds
    const steps = Array.from({ length: STEPS - 1 }, (_, i) => ({ tool: 'scroll', args: { direction: i % 2 ? 'up' : 'down' }, usage }));
    await registerScript(model.url, { match: token, steps: [...steps, { tool: 'done', args: { message: 'long task done' }, usage }] });
    await send(prompt(token, 'the long task'));

    // Every run of the session (a run may have continued as new between tasks), newest first,
    // read in small pages (a page of a history with repeated large payloads can exceed gRPC's 4 MB).
    const events: temporal.api.history.v1.IHistoryEvent[] = [];
    let runs = 0;
    for (let runId = ''; ; runs++) {
      const runEvents: temporal.api.history.v1.IHistoryEvent[] = [];
      let nextPageToken: Uint8Array | undefined;
      do {
        const page = await connection.workflowService.getWorkflowExecutionHistory({
          namespace: 'browser-agent',
          execution: { workflowId: `session-${s.sessionId}`, runId },
          maximumPageSize: 10,
          nextPageToken,
        });
        runEvents.push(...(page.history?.events ?? []));
        nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
      } while (nextPageToken);
      events.push(...runEvents);
      runId = runEvents[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? '';
      if (!runId) break;
    }
    const bytes = temporal.api.history.v1.History.encode({ events }).finish().length;
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'agentStep');
    const stepInputBytes = scheduled.map((e) => temporal.api.common.v1.Payloads.encode(e.activityTaskScheduledEventAttributes!.input ?? {}).finish().length);
    const out = {
      benchmark: 'history-size',
      tasks: `2 one-step tasks, then one of ${STEPS} steps; every prompt ${PROMPT_CHARS} characters`,
      runs: runs + 1,
      historyEvents: events.length,
      historyBytes: bytes,
      agentSteps: scheduled.length,
      agentStepInputBytes: { total: stepInputBytes.reduce((a, b) => a + b, 0), max: Math.max(...stepInputBytes), median: [...stepInputBytes].sort((a, b) => a - b)[Math.floor(stepInputBytes.length / 2)] },
    };
    fs.writeFileSync(process.env.BENCH_HISTORY_OUT ?? path.join(ROOT, '.data/bench-history.json'), JSON.stringify(out, null, 2));
    await api(service.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  } finally {
    await connection.close();
    await service.stop();
    await fixtures.close();
    await model.close();
  }
}, 600_000);
