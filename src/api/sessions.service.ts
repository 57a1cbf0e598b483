import { timingSafeEqual } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import type { Config } from '../config';
import { InsufficientBalanceError, InvalidParameterError, InvalidParamsError, NoInstancesError, NotFoundError, ServiceError, isErrorCode } from '../contracts/errors';
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
} from '../workflows/messages';
import { OwnerUserIdKey, SessionStatusKey } from '../contracts/search-attributes';
import { TERMINAL_TASK_STATUSES, type InteractionAction, type ReplaySource, type SessionProxy, type SessionView, type TaskParams, type TaskView } from '../contracts/session-types';
import { Y_OFFSET, type InteractionAction as ApiInteraction } from '../contracts/schemas/message.schema';
import type { TaskParamsInput } from '../contracts/schemas/task.schema';
import type { ProxyInput } from '../contracts/schemas/session.schema';

export interface StartedSession {
  sessionId: string;
  taskId?: string;
  balance: number;
}

/** How long a poll that sees a task's end waits for its downloads and requests to be stored. */
const TASK_RECORD_WAIT_MS = 5_000;

/**
 * Maps API calls onto the session workflow: start, updates, queries. Holds no session
 * state: everything lives in Temporal and MongoDB.
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

  /** Starts a session workflow and waits until it holds a browser. */
  async start(user: UserRecord, task?: TaskParamsInput, attach: { environmentId?: string | null; profileId?: string | null; policyId?: string | null; proxy?: ProxyInput | null; reachOutMode?: 'off' | 'guardrail_only' | 'full'; reachOutModeGiven?: boolean; singleTask?: boolean } = {}): Promise<StartedSession> {
    const { store, registry, config, temporal, logger } = this.deps;
    this.assertBalance(user);
    if (attach.environmentId && attach.profileId) throw new InvalidParamsError('Give environmentId or profileId, not both');
    if (attach.policyId && !(await store.policies.get(attach.policyId, user._id))) throw new NotFoundError('POLICY_NOT_FOUND', 'Policy not found');
    if (attach.reachOutModeGiven && attach.reachOutMode && attach.reachOutMode !== 'off') await this.assertChatReachable(user, attach.environmentId, attach.reachOutMode);
    const proxy = attach.proxy ? sessionProxy(attach.proxy, config) : undefined;
    const replay = await this.replaySource(user, task?.replayOf, 'task.replayOf');
    if (task) task = await this.withReplayedAsk(user, task, replay);
    await this.claimFiles(user, task);
    const workers = await registry.alive();
    // Placement happens in the workflow: a plain session is answered before it, so a service
    // whose every worker is full is refused here (the workflow's own refusal stays the backstop).
    if (workers.length === 0 || !workers.some((w) => w.sessions < w.capacity)) throw new NoInstancesError();
    const profile: ProfileSource | undefined = attach.environmentId
      ? { kind: 'environment', id: attach.environmentId, userId: user._id }
      : attach.profileId
        ? { kind: 'profile', id: attach.profileId, userId: user._id }
        : undefined;
    const t0 = performance.now();
    const { sessionId, balance } = await this.admission.admit({ userId: user._id, profile, user });
    const admitted = performance.now();
    const taskId = task ? newTaskId() : undefined;
    const log = logger.child({ sessionId, userId: user._id });
    const input = this.admission.input({
      sessionId,
      userId: user._id,
      proxy,
      profile,
      ...(attach.policyId ? { policyId: attach.policyId } : {}),
      reachOut: attach.environmentId && attach.reachOutMode !== 'off' ? { mode: attach.reachOutMode ?? 'guardrail_only', environmentId: attach.environmentId } : undefined,
      initialTask: task && taskId ? { taskId, params: toTaskParams(task, replay) } : undefined,
      ...(attach.singleTask && task ? { singleTask: true } : {}),
    });
    const startOptions = {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      workflowId: sessionWorkflowId(sessionId),
      workflowIdConflictPolicy: 'FAIL' as const,
      args: [input] as [typeof input],
      typedSearchAttributes: [
        { key: OwnerUserIdKey, value: user._id },
        { key: SessionStatusKey, value: 'pending' },
      ],
      memo: { userId: user._id },
    };
    if (!profile && !proxy) {
      // A plain session gets a ready browser context of the worker the workflow's first task
      // picks: it is answered once the workflow is started, and what comes next (a task, an
      // interaction, a viewer) waits for that hand-over in the workflow. A failure to place it
      // ends the session (end_session, instance_lost) instead of answering 503.
      try {
        await temporal.workflow.start(SESSION_WORKFLOW, startOptions);
      } catch (err) {
        await this.admission.abandon({ sessionId, userId: user._id, profile });
        throw err;
      }
      log.info({ admitMs: Math.round(admitted - t0), startMs: Math.round(performance.now() - admitted) }, 'session started');
      return { sessionId, taskId, balance };
    }
    // One request starts the workflow and waits for its browser (update-with-start): the
    // session's proxy is tried and its profile opened before the answer, whose failure is the
    // answer's (400 PROXY_CONNECTION_FAILED, 503).
    const operation = new WithStartWorkflowOperation(SESSION_WORKFLOW, startOptions);
    let ready: SessionView;
    try {
      ready = await temporal.workflow.executeUpdateWithStart(awaitReadyUpdate, { startWorkflowOperation: operation });
    } catch (err) {
      // Not started: nothing runs that would give the slot back.
      if (!(await operation.workflowHandle().then(() => true, () => false))) await this.admission.abandon({ sessionId, userId: user._id, profile });
      throw err;
    }
    const handle = await operation.workflowHandle();
    const timings = { admitMs: Math.round(admitted - t0), readyMs: Math.round(performance.now() - admitted) };
    if (ready.status !== 'active') {
      log.warn({ status: ready.status, error: ready.error }, 'session could not start');
      // The workflow gives the slot and the profile lock back as it ends: answer after that,
      // so the user's next request does not meet a slot still held by this failure.
      await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, 10_000))]);
      if (ready.error?.code === 'PROXY_CONNECTION_FAILED') {
        // The user's proxy is the user's to mend (400); a managed one failing is ours (503).
        throw new ServiceError(proxy?.source === 'custom' ? 'PROXY_CONNECTION_FAILED' : 'MANAGED_PROXY_UNAVAILABLE', ready.error.message, ready.error.details);
      }
      throw new NoInstancesError();
    }
    log.info({ workerId: ready.workerId, ...timings }, 'session started');
    return { sessionId, taskId, balance };
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

  async newTask(user: UserRecord, sessionId: string, params: TaskParamsInput): Promise<string> {
    this.assertBalance(user);
    await this.ownedSession(user, sessionId);
    const replay = await this.replaySource(user, params.replayOf, 'message.replayOf');
    params = await this.withReplayedAsk(user, params, replay);
    await this.claimFiles(user, params);
    const taskId = newTaskId();
    await this.update(sessionId, () => this.handle(sessionId).executeUpdate(newTaskUpdate, { args: [{ taskId, params: toTaskParams(params, replay) }] }));
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

/**
 * The service error a failed update of the session workflow stands for: its validator's
 * or handler's rejection (a code of the catalogue), or INSTANCE_UNAVAILABLE when the
 * activity on the session's browser worker failed because the worker is gone.
 */
export function updateRejection(err: unknown): ServiceError | null {
  if (!(err instanceof WorkflowUpdateFailedError)) return null;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure) {
    const code = isErrorCode(cause.type) ? cause.type : 'INVALID_STATE';
    const details = cause.details?.[0] as Record<string, unknown> | undefined;
    if (code === 'INSTANCE_LOST') return instanceUnavailable();
    return new ServiceError(code, cause.message, details);
  }
  if (cause instanceof ActivityFailure) {
    const inner = cause.cause;
    if (inner instanceof TimeoutFailure || (inner instanceof ApplicationFailure && inner.type === 'INSTANCE_LOST')) return instanceUnavailable();
  }
  return null;
}

/** How long a terminate waits for the session to give back its slot before it answers anyway. */
const SESSION_END_WAIT_MS = 10_000;

const instanceUnavailable = () => new ServiceError('INSTANCE_UNAVAILABLE', "The session's browser instance is unavailable; it is being restored on another instance, try again shortly");


/** The workflow is closed (or was never there): Temporal answers NOT_FOUND to updates of a closed workflow. */
function isClosedWorkflow(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}

/** The session's upstream proxy: the user's own, or one of the operator's pool by country. */
export function sessionProxy(p: ProxyInput, config: Pick<Config, 'MANAGED_PROXIES' | 'PROXY_PRICE_PER_GB'>, random = Math.random): SessionProxy {
  if (p.source === 'custom') {
    const auth = p.username || p.password ? `${encodeURIComponent(p.username ?? '')}:${encodeURIComponent(p.password ?? '')}@` : '';
    const host = p.host.includes(':') && !p.host.startsWith('[') ? `[${p.host}]` : p.host;
    return { url: `${p.type === 'socks' ? 'socks5' : 'http'}://${auth}${host}:${p.port}`, source: 'custom', level: p.level ?? 'system' };
  }
  const pool = config.MANAGED_PROXIES;
  if (!pool.length) throw new InvalidParameterError('proxy.source', p.source, 'No managed proxies are configured on this service; use a proxy with source "custom"');
  const wanted = p.country.toUpperCase();
  const candidates = wanted === 'RANDOM' ? pool : pool.filter((m) => m.country.toUpperCase() === wanted);
  if (!candidates.length) {
    const available = [...new Set(pool.map((m) => m.country.toUpperCase()))].sort().join(', ');
    throw new InvalidParameterError('proxy.country', p.country, `No managed proxy in ${wanted}; available countries: ${available} (or "random")`);
  }
  const chosen = candidates[Math.floor(random() * candidates.length)];
  return { url: chosen.url, source: 'Service', level: p.level ?? 'system', country: chosen.country.toUpperCase(), pricePerByte: config.PROXY_PRICE_PER_GB / 1e9 };
}

/** The validated task as the workflow carries it: the schema's output, secrets only when given. */
export function toTaskParams(t: TaskParamsInput, replay?: ReplaySource): TaskParams {
  const { secrets, replayOf: _named, ...rest } = t;
  return { ...rest, ...(secrets.length ? { secrets } : {}), ...(replay ? { replay } : {}) };
}
