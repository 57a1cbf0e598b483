/**
 * One application core: the same bad task, sent through every door (REST start-session,
 * run-task and send-message, a message on the socket, the MCP tools, the OpenAI-compatible
 * chat completions, a trigger's create), is refused with the same error code, each in its
 * door's documented error shape, and starts nothing.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { api } from '../support/http';
import { connectMcp, type ToolResult } from '../support/mcp';
import { admin, createUser } from '../support/service';
import { connectSession, emitWithAck } from '../support/socket';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;

/** A task with nothing to do. */
const BLANK = { prompt: '  \n\t ' };
/** A JSON Schema the request schema takes but the service cannot enforce (it does not compile). */
const UNCOMPILABLE = { type: 'object', required: 'a' };
const UNENFORCEABLE = { prompt: 'Read the price', outputType: 'structured_json', outputSchema: UNCOMPILABLE };
const SCHEMA_PROBLEM = 'outputSchema is not a valid JSON Schema: outputSchema.required must be array';

/** What each door answered, reduced to the code and where it says the problem is. */
interface Refusal {
  door: string;
  status?: number;
  code: string | null | undefined;
  where?: unknown;
}

const rest = async (door: string, path: string, key: string, body: unknown): Promise<Refusal> => {
  const r = await api(base(), 'POST', path, { key, body });
  expect(r.body).toMatchObject({ success: false, error: expect.any(String), message: expect.any(String) });
  return { door, status: r.status, code: r.body.code, where: r.body.details };
};

const socket = async (door: string, live: Awaited<ReturnType<typeof connectSession>>, message: Record<string, unknown>): Promise<Refusal> => {
  const ack = await emitWithAck(live.socket, message);
  expect(ack).toMatchObject({ success: false, error: expect.any(String) });
  return { door, code: ack.code, where: ack.details };
};

const tool = async (door: string, client: Client, name: string, args: Record<string, unknown>): Promise<Refusal> => {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  // A tool error: isError, the code first in the text and in the structured content.
  if (!r.isError) return { door, code: `not refused: ${r.content[0]?.text}` };
  expect(r.content[0].text).toMatch(new RegExp(`^${r.structuredContent?.code}: `));
  return { door, code: r.structuredContent?.code, where: r.structuredContent?.details };
};

const chat = async (door: string, key: string, content: string): Promise<Refusal> => {
  const r = await api(base(), 'POST', '/v1/chat/completions', { key, body: { model: 'service-browser-1', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content }] } });
  expect(r.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.any(String) });
  return { door, status: r.status, code: r.body.error.code };
};

const activeSessions = async (userId: string): Promise<number> => (await admin(['users', 'list'])).json.users.find((u: { userId: string }) => u.userId === userId).activeSessions;

/** A user with a live session (its socket open), an environment and an MCP client: every door open to one user. */
interface Doors {
  userId: string;
  key: string;
  sessionId: string;
  environmentId: string;
  live: Awaited<ReturnType<typeof connectSession>>;
  mcp: Client;
}

/** Each test has its own user: the doors' task-starting calls share the per-user limit of 10 a minute. */
async function openDoors(): Promise<Doors> {
  const { userId, apiKey: key } = await createUser({ balance: 10 });
  const started = await api(base(), 'POST', '/start/start-session', { key, body: {} });
  expect(started.status).toBe(200);
  const env = await api(base(), 'POST', '/environments', { key, body: { name: `one core ${Date.now()}` } });
  expect(env.status).toBe(200);
  const live = await connectSession(base(), { sessionId: started.body.sessionId });
  const mcp = await connectMcp(base(), key, 'streamable');
  return { userId, key, sessionId: started.body.sessionId, environmentId: env.body.environment._id, live, mcp };
}

async function closeDoors(d: Doors): Promise<void> {
  d.live.socket.close();
  await d.mcp.close().catch(() => undefined);
  await api(base(), 'POST', '/start/send-message', { key: d.key, body: { sessionId: d.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
}

/**
 * The task sent through every door that takes one, one door after the other, with the task's
 * fields where that door carries them (a trigger has its own names for some).
 */
async function throughEveryDoor(d: Doors, task: Record<string, unknown>, trigger: Record<string, unknown>, chatContent?: string): Promise<Refusal[]> {
  // Short enough that a door which let the task through answers within the test's time.
  const bounded = { ...task, maxDuration: 10_000, startingUrl: `${fixtures()}/index.html` };
  const newTask = { actionType: 'newTask', newState: 'start', ...bounded };
  const doors: (() => Promise<Refusal>)[] = [
    () => rest('start-session', '/start/start-session', d.key, { task: bounded }),
    () => rest('run-task', '/start/run-task', d.key, { task: bounded }),
    () => rest('send-message', '/start/send-message', d.key, { sessionId: d.sessionId, message: newTask }),
    () => socket('socket', d.live, newTask),
    () => tool('mcp browser_task', d.mcp, 'browser_task', bounded),
    () => tool('mcp send_task_to_session', d.mcp, 'send_task_to_session', { sessionId: d.sessionId, ...bounded }),
    () => rest('trigger create', '/cron-jobs', d.key, { name: 'one core', environmentId: d.environmentId, scheduleType: 'every', scheduleInterval: '1d', deliveryMode: 'bot', ...trigger }),
  ];
  if (chatContent !== undefined) doors.push(() => chat('chat completions', d.key, chatContent));
  const answers: Refusal[] = [];
  for (const door of doors) answers.push(await door());
  return answers;
}

/** Nothing was started: the user's one session is the test's own, and no trigger exists. */
async function expectNothingStarted(d: Doors): Promise<void> {
  expect(await activeSessions(d.userId)).toBe(1);
  expect((await api(base(), 'GET', '/cron-jobs', { key: d.key })).body.cronJobs).toEqual([]);
}

describe('one application core: the same bad task gets the same code through every door', () => {
  const opened: Doors[] = [];
  const doors = async () => {
    const d = await openDoors();
    opened.push(d);
    return d;
  };
  afterAll(async () => {
    for (const d of opened) await closeDoors(d);
  });

  it('a blank prompt is INVALID_TASK_DETAILS at every door, and runs nothing', async () => {
    const d = await doors();
    const field = (f: string) => ({ field: f });
    expect(await throughEveryDoor(d, BLANK, BLANK, BLANK.prompt)).toEqual([
      { door: 'start-session', status: 400, code: 'INVALID_TASK_DETAILS', where: field('task.prompt') },
      { door: 'run-task', status: 400, code: 'INVALID_TASK_DETAILS', where: field('task.prompt') },
      { door: 'send-message', status: 400, code: 'INVALID_TASK_DETAILS', where: field('message.prompt') },
      { door: 'socket', code: 'INVALID_TASK_DETAILS', where: field('message.prompt') },
      { door: 'mcp browser_task', code: 'INVALID_TASK_DETAILS', where: field('prompt') },
      { door: 'mcp send_task_to_session', code: 'INVALID_TASK_DETAILS', where: field('prompt') },
      { door: 'trigger create', status: 400, code: 'INVALID_TASK_DETAILS', where: field('prompt') },
      // The OpenAI shape carries the code in lower case.
      { door: 'chat completions', status: 400, code: 'invalid_task_details' },
    ]);
    await expectNothingStarted(d);
  });

  it('an output schema the service cannot enforce is INVALID_PARAMETER at every door that takes one, and runs nothing', async () => {
    const d = await doors();
    const parameter = (p: string) => ({ parameter: p, value: null });
    expect(await throughEveryDoor(d, UNENFORCEABLE, { prompt: 'Read the price', outputType: 'structured', outputSchema: UNCOMPILABLE })).toEqual([
      { door: 'start-session', status: 400, code: 'INVALID_PARAMETER', where: parameter('task.outputSchema') },
      { door: 'run-task', status: 400, code: 'INVALID_PARAMETER', where: parameter('task.outputSchema') },
      { door: 'send-message', status: 400, code: 'INVALID_PARAMETER', where: parameter('message.outputSchema') },
      { door: 'socket', code: 'INVALID_PARAMETER', where: parameter('message.outputSchema') },
      { door: 'mcp browser_task', code: 'INVALID_PARAMETER', where: parameter('outputSchema') },
      { door: 'mcp send_task_to_session', code: 'INVALID_PARAMETER', where: parameter('outputSchema') },
      { door: 'trigger create', status: 400, code: 'INVALID_PARAMETER', where: parameter('outputSchema') },
    ]);
    const mcpText = ((await d.mcp.callTool({ name: 'browser_task', arguments: UNENFORCEABLE })) as ToolResult).content[0].text;
    expect(mcpText).toBe(`INVALID_PARAMETER: ${SCHEMA_PROBLEM}`);
    await expectNothingStarted(d);
  });
});
