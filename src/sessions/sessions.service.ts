import { timingSafeEqual } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { Config } from '../config';
import { InsufficientBalanceError, InvalidParameterError, InvalidParamsError, NoInstancesError, NotFoundError, ServiceError } from '../contracts/errors';
import { linkSecret } from '../files/links';
import { sessionViewToken } from '../contracts/link-tokens';
import type { Logger } from '../logger';
import { newTaskId } from '../store/ids';
import type { ProfileSource } from '../contracts/profiles';
import { SessionAdmission } from '../store/session-admission';
import type { Store } from '../store/store';
import { LIVE_SESSION_STATUSES, type SessionRecord } from '../store/sessions.repository';
import { TIMELINE_KEPT_AFTER_END_MS, type TimelineEntry } from '../contracts/events';
import type { UserRecord } from '../store/users.repository';
import type { WorkerRegistry } from '../store/worker-registry';
import {
  awaitReadyUpdate,
  awaitTaskUpdate,
  guardrailUpdate,
  interactionUpdate,
  newTaskUpdate,
  SESSION_WORKFLOW,
  sessionQuery,
  sessionWorkflowId,
  stateUpdate,
  taskQuery,
} from '../contracts/session-messages';
import { OwnerUserIdKey, SessionStatusKey } from '../contracts/search-attributes';
import { TERMINAL_TASK_STATUSES, type InteractionAction, type ReplaySource, type SessionInput, type SessionProxy, type SessionView, type TaskParams, type TaskView } from '../contracts/session-types';
import { Y_OFFSET, type InteractionAction as ApiInteraction } from '../contracts/schemas/message.schema';
import type { TaskParamsInput } from '../contracts/schemas/task.schema';
import type { ProxyInput } from '../contracts/schemas/session.schema';
import { sessionInput, toTaskParams, type SessionAsk } from './session-input';
import { sessionProxy } from './session-proxy';
import { checkTask, TASK_PLACES, type TaskPlace } from './task-checks';
import { instanceUnavailable, isClosedWorkflow, updateRejection } from './update-rejection';

export interface StartedSession {
  sessionId: string;
  taskId?: string;
  balance: number;
}

/** How long a poll that sees a task's end waits for its downloads and requests to be stored. */
const TASK_RECORD_WAIT_MS = 5_000;

/**
 * The one application core every door calls (REST, the socket, MCP, chat completions):
 * checks a task and a session, maps them onto the session workflow (start, updates,
 * queries) and waits for a task's outcome. The doors only parse and shape their wire
 * format. Holds no session state: everything lives in Temporal and MongoDB.
 */
export class SessionsService {
  constructor(private readonly deps: { config: Config; temporal: Client; store: Store; registry: WorkerRegistry; logger: Logger }) {
    this.admission = new SessionAdmission(deps);
  }

  /**
   * A task's files must be the user's own uploads; they are kept for the task's life. Ids
   * that name none of them are 404 FILE_NOT_FOUND (details: parameter, value), as an unknown
   * environmentId is 404: the request is well formed, what it names is not there.
   */
  private async claimFiles(user: UserRecord, task: TaskParamsInput | undefined): Promise<void> {
    if (!task?.files.length) return;
    const { missing } = await this.deps.store.files.claimForTask(user._id, task.files);
    if (missing.length) throw new ServiceError('FILE_NOT_FOUND', `Unknown fileIds: ${missing.join(', ')}`, { parameter: 'files', value: missing });
  }

  private readonly admission: SessionAdmission;

  private handle(sessionId: string): WorkflowHandle {
    return this.deps.temporal.workflow.getHandle(sessionWorkflowId(sessionId));
  }

  /**
   * An explicit reachOutMode other than `off` needs someone to reach: an environment of the
   * user's with a chat connection (decisions.md). Left out, the default applies silently.
   */
  private async assertChatReachable(user: UserRecord, environmentId: string | null | undefined, mode: string): Promise<void> {
    const why = 'needs an environment with a chat connection (environmentId, and PUT /environments/{id}/chat)';
    if (!environmentId) throw new InvalidParameterError('reachOutMode', mode, `reachOutMode ${mode} ${why}; none is given`);
    const environment = await this.deps.store.environments.get(environmentId, user._id);
    // An environment that is not the user's is answered 404 where the session is admitted.
    if (environment && !environment.chat) throw new InvalidParameterError('reachOutMode', mode, `reachOutMode ${mode} ${why}; environment ${environmentId} has none`);
  }

  viewToken(sessionId: string): string {
    return sessionViewToken(linkSecret(this.deps.config), sessionId);
  }

  checkViewToken(sessionId: string, token: string): boolean {
    const want = Buffer.from(this.viewToken(sessionId));
    const got = Buffer.from(token);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  assertBalance(user: UserRecord): void {
    const required = this.deps.config.MIN_BALANCE_USD;
    if (user.balance < required || user.balance <= 0) throw new InsufficientBalanceError(user.balance, required);
  }

  /**
   * Starts a session workflow and waits until it holds a browser. `place` is where the door
   * carries the task's fields (for the errors of its checks).
   */
  async start(user: UserRecord, task?: TaskParamsInput, attach: SessionAttach = {}, place: TaskPlace = TASK_PLACES.session): Promise<StartedSession> {
    const prepared = await this.prepare(user, task, attach, place);
    const t0 = performance.now();
    const { sessionId, balance } = await this.admission.admit({ userId: user._id, profile: prepared.profile, user });
    const admitted = performance.now();
    const taskId = prepared.task ? newTaskId() : undefined;
    const input = sessionInput(this.deps.config, sessionAsk(user, sessionId, attach, prepared, taskId));
    const launch: Launch = {
      options: startOptions(this.deps.config, user, input),
      abandon: () => this.admission.abandon({ sessionId, userId: user._id, profile: prepared.profile }),
      log: this.deps.logger.child({ sessionId, userId: user._id }),
      admitMs: Math.round(admitted - t0),
      admitted,
    };
    if (!prepared.profile && !prepared.proxy) await this.launchPlain(launch);
    else await this.launchWithBrowser(launch, prepared.proxy);
    return { sessionId, taskId, balance };
  }

  /**
   * Every check before a slot is taken, in the order a user meets them: the task, the
   * balance, what the session is attached to, its proxy, the task's replay and files, and
   * a worker with room.
   */
  private async prepare(user: UserRecord, task: TaskParamsInput | undefined, attach: SessionAttach, place: TaskPlace): Promise<PreparedSession> {
    if (task) await checkTask(task, place);
    this.assertBalance(user);
    await this.checkAttach(user, attach);
    const proxy = attach.proxy ? sessionProxy(attach.proxy, this.deps.config) : undefined;
    const params = task ? await this.taskToRun(user, task, place) : undefined;
    const workers = await this.deps.registry.alive();
    // Placement happens in the workflow: a plain session is answered before it, so a service
    // whose every worker is full is refused here (the workflow's own refusal stays the backstop).
    if (workers.length === 0 || !workers.some((w) => w.sessions < w.capacity)) throw new NoInstancesError();
    return { task: params, proxy, profile: profileSource(user, attach) };
  }

  /** What the session is attached to: an environment or a profile (not both), the user's own policy, someone to reach out to. */
  private async checkAttach(user: UserRecord, attach: SessionAttach): Promise<void> {
    if (attach.environmentId && attach.profileId) throw new InvalidParamsError('Give environmentId or profileId, not both');
    if (attach.policyId && !(await this.deps.store.policies.get(attach.policyId, user._id))) throw new NotFoundError('POLICY_NOT_FOUND', 'Policy not found');
    if (attach.reachOutModeGiven && attach.reachOutMode && attach.reachOutMode !== 'off') await this.assertChatReachable(user, attach.environmentId, attach.reachOutMode);
  }

  /** The task as the workflow runs it: a replay's source and what it was asked, the task's files claimed. */
  private async taskToRun(user: UserRecord, task: TaskParamsInput, place: TaskPlace): Promise<TaskParams> {
    const replay = await this.replaySource(user, task.replayOf, `${place.prefix}replayOf`);
    const asked = await this.withReplayedAsk(user, task, replay);
    await this.claimFiles(user, asked);
    return toTaskParams(asked, replay);
  }

  /**
   * A plain session gets a ready browser context of the worker the workflow's first task
   * picks: it is answered once the workflow is started, and what comes next (a task, an
   * interaction, a viewer) waits for that hand-over in the workflow. A failure to place it
   * ends the session (end_session, instance_lost) instead of answering 503.
   */
  private async launchPlain(launch: Launch): Promise<void> {
    try {
      await this.deps.temporal.workflow.start(SESSION_WORKFLOW, launch.options);
    } catch (err) {
      await launch.abandon();
      throw err;
    }
    launch.log.info({ admitMs: launch.admitMs, startMs: Math.round(performance.now() - launch.admitted) }, 'session started');
  }

  /**
   * One request starts the workflow and waits for its browser (update-with-start): the
   * session's proxy is tried and its profile opened before the answer, whose failure is the
   * answer's (400 PROXY_CONNECTION_FAILED, 503).
   */
  private async launchWithBrowser(launch: Launch, proxy: SessionProxy | undefined): Promise<void> {
    const operation = new WithStartWorkflowOperation(SESSION_WORKFLOW, launch.options);
    let ready: SessionView;
    try {
      ready = await this.deps.temporal.workflow.executeUpdateWithStart(awaitReadyUpdate, { startWorkflowOperation: operation });
    } catch (err) {
      // Not started: nothing runs that would give the slot back.
      if (!(await operation.workflowHandle().then(() => true, () => false))) await launch.abandon();
      throw err;
    }
    const handle = await operation.workflowHandle();
    if (ready.status === 'active') {
      launch.log.info({ workerId: ready.workerId, admitMs: launch.admitMs, readyMs: Math.round(performance.now() - launch.admitted) }, 'session started');
      return;
    }
    launch.log.warn({ status: ready.status, error: ready.error }, 'session could not start');
    // The workflow gives the slot and the profile lock back as it ends: answer after that,
    // so the user's next request does not meet a slot still held by this failure.
    await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, 10_000))]);
    if (ready.error?.code === 'PROXY_CONNECTION_FAILED') {
      // The user's proxy is the user's to mend (400); a managed one failing is ours (503).
      throw new ServiceError(proxy?.source === 'custom' ? 'PROXY_CONNECTION_FAILED' : 'MANAGED_PROXY_UNAVAILABLE', ready.error.message, ready.error.details);
    }
    throw new NoInstancesError();
  }

  /**
   * The live session of this user, or 404: SESSION_EXPIRED when the owner's session ended
   * by inactivity, SESSION_NOT_FOUND for any other ended, unknown or foreign session.
   */
  async ownedSession(user: UserRecord, sessionId: string): Promise<SessionRecord> {
    const rec = await this.deps.store.sessions.get(sessionId);
    if (!rec || rec.userId !== user._id) throw new NotFoundError('SESSION_NOT_FOUND', 'Session not found');
    if (rec.status === 'expired') throw new NotFoundError('SESSION_EXPIRED', 'Session expired');
    if (!['pending', 'active', 'orphaned'].includes(rec.status)) throw new NotFoundError('SESSION_NOT_FOUND', 'Session has ended');
    return rec;
  }

  /**
   * The session's events after `after` (its timeline), for its owner: while it lives and
   * for TIMELINE_KEPT_AFTER_END_MS after it ended. Another user's session is a 404.
   */
  async events(user: UserRecord, sessionId: string, after: number, limit: number): Promise<{ session: SessionRecord; events: TimelineEntry[]; hasMore: boolean }> {
    const session = await this.deps.store.sessions.get(sessionId);
    if (!session || session.userId !== user._id) throw new NotFoundError('SESSION_NOT_FOUND', 'Session not found');
    const ended = !LIVE_SESSION_STATUSES.includes(session.status);
    if (ended && (session.endedAt ?? session.updatedAt).getTime() + TIMELINE_KEPT_AFTER_END_MS < Date.now()) {
      throw new NotFoundError('SESSION_NOT_FOUND', 'Session has ended and its events are no longer kept');
    }
    const events = await this.deps.store.events.after(sessionId, after, limit + 1);
    return { session, events: events.slice(0, limit), hasMore: events.length > limit };
  }

  /**
   * Who holds the session's browser now, and the seq up to which the timeline agrees: the
   * seq is read first, so a change published after it comes as an event with a greater seq.
   */
  async controlState(sessionId: string): Promise<{ manual: boolean; asleep: boolean; seq: number }> {
    const seq = await this.deps.store.events.latestSeq(sessionId);
    const view = await this.handle(sessionId).query(sessionQuery);
    return { manual: view.manual === true, asleep: view.hibernated === true, seq };
  }

  /** A new task in the user's live session; `place` is where the door carries its fields. */
  async newTask(user: UserRecord, sessionId: string, params: TaskParamsInput, place: TaskPlace = TASK_PLACES.message): Promise<string> {
    await checkTask(params, place);
    this.assertBalance(user);
    await this.ownedSession(user, sessionId);
    const task = await this.taskToRun(user, params, place);
    const taskId = newTaskId();
    await this.update(sessionId, () => this.handle(sessionId).executeUpdate(newTaskUpdate, { args: [{ taskId, params: task }] }));
    return taskId;
  }

  /**
   * What a replay performs: `replayOf` must be one of the user's tasks (else 404) that
   * completed (else 400 INVALID_REPLAY); the newest completed run of its line is replayed,
   * so a replay that had to be repaired is what the next one repeats.
   */
  async replaySource(user: UserRecord, replayOf: string | undefined, field: string): Promise<ReplaySource | undefined> {
    if (replayOf === undefined) return undefined;
    const { tasks } = this.deps.store;
    const named = await tasks.owned(user._id, replayOf);
    if (!named) throw new NotFoundError('TASK_NOT_FOUND', `Task ${replayOf} not found`);
    if (named.status !== 'task_completed') {
      throw new ServiceError('INVALID_REPLAY', `Task ${replayOf} is ${named.status}: only a completed task's recording can be replayed`, { field, status: named.status });
    }
    const root = named.replayRoot ?? named._id;
    return { of: named._id, root, source: (await tasks.newestOfLine(user._id, root)) ?? named._id };
  }

  /**
   * A replay's task takes what the replayed task was asked where the request leaves it
   * out: the prompt (when empty), the startingUrl (when null) and the output format (when
   * the request asks for plain text).
   */
  private async withReplayedAsk<T extends TaskParamsInput>(user: UserRecord, task: T, replay: ReplaySource | undefined): Promise<T> {
    if (!replay) return task;
    const asked = await this.deps.store.recordings.header(replay.of, user._id);
    if (!asked) return task;
    const keepsFormat = task.outputType !== 'text' || task.outputSchema !== undefined;
    return {
      ...task,
      prompt: task.prompt.trim() ? task.prompt : asked.prompt,
      startingUrl: task.startingUrl ?? asked.startingUrl,
      ...(keepsFormat ? {} : { outputType: asked.outputType, ...(asked.outputSchema !== undefined ? { outputSchema: asked.outputSchema } : {}) }),
    };
  }

  /** Waits up to the inline wait for a task to end or ask for a human; null when still going. */
  async awaitTask(sessionId: string, taskId: string, timeoutMs = this.deps.config.INLINE_WAIT_MS): Promise<TaskView | null> {
    try {
      const outcome = await this.handle(sessionId).executeUpdate(awaitTaskUpdate, { args: [{ taskId, timeoutMs }] });
      if (!outcome || !TERMINAL_TASK_STATUSES.includes(outcome.status)) return outcome;
      // Read your writes: the end is answered once it is stored (the completion event is
      // published before the record is saved), so every later read sees it.
      const stored = await this.storedEnd(sessionId, taskId, TASK_RECORD_WAIT_MS);
      return { ...outcome, files: stored?.files, network: stored?.network };
    } catch (err) {
      // The session ended in the meantime: the record holds the outcome.
      if (isClosedWorkflow(err)) return this.deps.store.tasks.get(sessionId, taskId);
      throw err;
    }
  }

  /**
   * Waits until the task ends or asks for a human (a guardrail), one inline wait after
   * another; null when `stopped` says the caller went away or `deadline` (ms epoch) passed.
   */
  async outcome(sessionId: string, taskId: string, until: { deadline: number; stopped: () => boolean }): Promise<TaskView | null> {
    while (!until.stopped() && Date.now() < until.deadline) {
      const view = await this.awaitTask(sessionId, taskId);
      if (view && (TERMINAL_TASK_STATUSES.includes(view.status) || view.status === 'guardrail_trigger')) return view;
    }
    return null;
  }

  /** The task's stored record once it holds an end (at most `ms` waited; the record as it is then). */
  private async storedEnd(sessionId: string, taskId: string, ms: number): Promise<TaskView | null> {
    const deadline = Date.now() + ms;
    for (let pause = 10; ; pause = Math.min(pause * 2, 100)) {
      const stored = await this.deps.store.tasks.get(sessionId, taskId);
      if ((stored && TERMINAL_TASK_STATUSES.includes(stored.status)) || Date.now() >= deadline) return stored;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  async changeState(user: UserRecord, sessionId: string, newState: 'pause' | 'resume' | 'stop' | 'terminate', opts: { awaitEnd?: boolean } = {}): Promise<string> {
    await this.ownedSession(user, sessionId);
    const answer = await this.update(sessionId, () => this.handle(sessionId).executeUpdate(stateUpdate, { args: [{ newState }] }));
    // Answered once the session has given back its slot and profile lock as it ended, so the
    // user's next start does not meet a slot still held by a session the answer called ended.
    if (newState === 'terminate' && opts.awaitEnd !== false) await this.ended(sessionId, SESSION_END_WAIT_MS);
    return answer;
  }

  /** Waits (at most `ms`) for the session's workflow to close. */
  private async ended(sessionId: string, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const closed = this.handle(sessionId).result().then(() => undefined, () => undefined);
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  async answerGuardrail(user: UserRecord, sessionId: string, prompt: string): Promise<string> {
    await this.ownedSession(user, sessionId);
    return this.update(sessionId, () => this.handle(sessionId).executeUpdate(guardrailUpdate, { args: [{ prompt }] }));
  }

  /** Manual control; the API's coordinates (y offset by 155) become page coordinates here. */
  async interact(user: UserRecord, sessionId: string, action: ApiInteraction): Promise<string> {
    const rec = await this.ownedSession(user, sessionId);
    // Input needs the browser: while its worker is gone (orphaned) there is none to send it to.
    if (rec.status === 'orphaned' && action.type !== 'takeOverControl' && action.type !== 'releaseControl') throw instanceUnavailable();
    const pageAction: InteractionAction =
      action.type === 'CLICK' || action.type === 'DOUBLE_CLICK' ? { type: action.type, x: action.x, y: action.y - Y_OFFSET } : action;
    return this.update(sessionId, () => this.handle(sessionId).executeUpdate(interactionUpdate, { args: [{ action: pageAction }] }));
  }

  /** A task as polling sees it: live from the workflow while it runs, else from the store. */
  async task(sessionId: string, taskId: string): Promise<TaskView | null> {
    const stored = await this.deps.store.tasks.get(sessionId, taskId);
    if (stored && TERMINAL_TASK_STATUSES.includes(stored.status)) return stored;
    // A session has its record before its workflow starts: without one (unknown, or past the
    // records' retention) the task is unknown, whatever Temporal still keeps of the workflow.
    if (!stored && !(await this.deps.store.sessions.get(sessionId))) return null;
    try {
      const live = await this.handle(sessionId).query(taskQuery, taskId);
      if (!live) return stored;
      if (!TERMINAL_TASK_STATUSES.includes(live.status)) return { ...live, files: stored?.files, network: stored?.network };
      // Ended since the first read, which may predate its stored downloads and requests:
      // answered once the workflow has collected them (moments later), from the store.
      return (await this.awaitTask(sessionId, taskId, TASK_RECORD_WAIT_MS)) ?? live;
    } catch (err) {
      if (!isClosedWorkflow(err) && !(err instanceof WorkflowNotFoundError)) this.deps.logger.warn({ err, sessionId }, 'task query failed');
    }
    return stored;
  }

  private async update<T>(sessionId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      const rejection = updateRejection(err);
      if (rejection) throw rejection;
      if (err instanceof WorkflowNotFoundError) {
        // The session ended meanwhile: its record says how.
        const rec = await this.deps.store.sessions.get(sessionId);
        throw rec?.status === 'expired' ? new NotFoundError('SESSION_EXPIRED', 'Session expired') : new NotFoundError('SESSION_NOT_FOUND', 'Session has ended');
      }
      throw err;
    }
  }
}

/** How long a terminate waits for the session to give back its slot before it answers anyway. */
const SESSION_END_WAIT_MS = 10_000;

/** What the session needs besides its task: what it runs on and who is reached. */
export interface SessionAttach {
  environmentId?: string | null;
  profileId?: string | null;
  policyId?: string | null;
  proxy?: ProxyInput | null;
  reachOutMode?: 'off' | 'guardrail_only' | 'full';
  reachOutModeGiven?: boolean;
  singleTask?: boolean;
}

/** A session that passed every check: its task as the workflow runs it, its proxy and profile. */
interface PreparedSession {
  task?: TaskParams;
  proxy?: SessionProxy;
  profile?: ProfileSource;
}

/** An admitted session on its way to the workflow: the start's options, and how to give back what admission took. */
interface Launch {
  options: ReturnType<typeof startOptions>;
  abandon: () => Promise<void>;
  log: Logger;
  admitMs: number;
  admitted: number;
}

/** The session workflow's start: its id, queue, input and the search attributes that list it under its owner. */
function startOptions(config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>, user: UserRecord, input: SessionInput) {
  return {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowId: sessionWorkflowId(input.sessionId),
    workflowIdConflictPolicy: 'FAIL' as const,
    args: [input] as [SessionInput],
    typedSearchAttributes: [
      { key: OwnerUserIdKey, value: user._id },
      { key: SessionStatusKey, value: 'pending' },
    ],
    memo: { userId: user._id },
  };
}

function profileSource(user: UserRecord, attach: SessionAttach): ProfileSource | undefined {
  if (attach.environmentId) return { kind: 'environment', id: attach.environmentId, userId: user._id };
  if (attach.profileId) return { kind: 'profile', id: attach.profileId, userId: user._id };
  return undefined;
}

/** What the session workflow is asked to run. */
function sessionAsk(user: UserRecord, sessionId: string, attach: SessionAttach, prepared: PreparedSession, taskId: string | undefined): SessionAsk {
  return {
    sessionId,
    userId: user._id,
    proxy: prepared.proxy,
    profile: prepared.profile,
    ...(attach.policyId ? { policyId: attach.policyId } : {}),
    reachOut: attach.environmentId && attach.reachOutMode !== 'off' ? { mode: attach.reachOutMode ?? 'guardrail_only', environmentId: attach.environmentId } : undefined,
    initialTask: prepared.task && taskId ? { taskId, params: prepared.task } : undefined,
    ...(attach.singleTask && prepared.task ? { singleTask: true } : {}),
  };
}
