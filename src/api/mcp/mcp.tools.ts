/** The MCP tools: each runs on the same sessions service as the REST API, as the connection's user. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { parseRequest } from '../../contracts/schemas/validation';
import { taskParamsSchema } from '../../contracts/schemas/task.schema';
import { TASK_PLACES } from '../../sessions/task-checks';
import { countStart, freshUser, owned, settle, taskResult, type McpCaller } from './mcp.caller';
import { result, runTool } from './tool-call';
import { browserTaskInput, controlSessionInput, createSessionInput, getTaskStatusInput, sendTaskInput, takeOverInput } from './tool-schemas';

/** The tools that run a task or read one: browser_task, send_task_to_session, get_task_status. */
export function registerTaskTools(server: McpServer, caller: McpCaller): void {
  const { config, sessions } = caller.deps;
  server.registerTool(
    'browser_task',
    {
      title: 'Run a browser task',
      description: 'Runs a prompt to the end in a new browser session (closed afterwards) and returns the result envelope: data.message, usage, files.',
      inputSchema: browserTaskInput,
    },
    (args, extra) =>
      runTool(caller.logger, async (x) => {
        await countStart(caller);
        const { environmentId, ...task } = args;
        const params = parseRequest(taskParamsSchema, { ...task, terminateOnCompletion: true });
        const started = await sessions.start(await freshUser(caller), params, { environmentId: environmentId ?? null }, TASK_PLACES.tool);
        return taskResult(config, await settle(caller, started.sessionId, started.taskId!, x));
      })(extra),
  );

  server.registerTool(
    'send_task_to_session',
    { title: 'Run a task in a session', description: 'Runs a prompt in an existing session and waits for its result (or a guardrail).', inputSchema: sendTaskInput },
    (args, extra) =>
      runTool(caller.logger, async (x) => {
        await countStart(caller);
        const { sessionId, ...task } = args;
        await owned(caller, sessionId);
        const params = parseRequest(taskParamsSchema, task);
        const taskId = await sessions.newTask(await freshUser(caller), sessionId, params, TASK_PLACES.tool);
        return taskResult(config, await settle(caller, sessionId, taskId, x));
      })(extra),
  );

  server.registerTool(
    'get_task_status',
    { title: 'Task status', description: 'The task as polling sees it: running, paused, guardrail_trigger, stopped, task_completed or failed.', inputSchema: getTaskStatusInput },
    (args, extra) =>
      runTool(caller.logger, async () => {
        await owned(caller, args.sessionId);
        return taskResult(config, await sessions.task(args.sessionId, args.taskId));
      })(extra),
  );
}

/** The tools that start or steer a session: create_session, control_session, take_over_control. */
export function registerSessionTools(server: McpServer, caller: McpCaller): void {
  const { config, sessions } = caller.deps;
  server.registerTool(
    'create_session',
    { title: 'Create a browser session', description: 'Starts a persistent browser session; send tasks to it with send_task_to_session.', inputSchema: createSessionInput },
    (args, extra) =>
      runTool(caller.logger, async () => {
        await countStart(caller);
        const started = await sessions.start(await freshUser(caller), undefined, { environmentId: args.environmentId ?? null, profileId: args.profileId ?? null, policyId: args.policyId ?? null, reachOutMode: args.reachOutMode, reachOutModeGiven: args.reachOutMode !== undefined });
        const token = sessions.viewToken(started.sessionId);
        const body = {
          success: true,
          sessionId: started.sessionId,
          webViewURL: `${config.PUBLIC_BASE_URL}/view/${started.sessionId}?token=${token}`,
          expiresIn: config.SESSION_IDLE_TIMEOUT_MS,
          balance: started.balance,
        };
        return result(body, `Session ${started.sessionId} started; live view: ${body.webViewURL}`);
      })(extra),
  );

  server.registerTool(
    'control_session',
    { title: 'Control a session', description: 'pause, resume or stop the running task, or terminate the session.', inputSchema: controlSessionInput },
    (args, extra) =>
      runTool(caller.logger, async () => {
        await owned(caller, args.sessionId);
        const message = await sessions.changeState(await freshUser(caller), args.sessionId, args.action);
        return result({ success: true, message }, message);
      })(extra),
  );

  server.registerTool(
    'take_over_control',
    { title: 'Take over or release', description: 'take_over pauses the agent so a human can drive the browser (live view); release hands control back.', inputSchema: takeOverInput },
    (args, extra) =>
      runTool(caller.logger, async () => {
        await owned(caller, args.sessionId);
        const message = await sessions.interact(await freshUser(caller), args.sessionId, { type: args.action === 'take_over' ? 'takeOverControl' : 'releaseControl' });
        return result({ success: true, message }, message);
      })(extra),
  );
}
