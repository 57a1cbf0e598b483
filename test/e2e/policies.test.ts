/**
 * Automation policies end to end: the /policies API, and sessions, task runs and trigger
 * runs whose every agent action is checked against their policy (scripted model, fixture
 * pages, real browser).
 */
import { MongoClient, type Db } from 'mongodb';
import { api, waitFor } from '../support/http';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

let mongo: MongoClient;
let db: Db;
beforeAll(async () => {
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  db = mongo.db();
});
afterAll(async () => {
  await mongo.close();
});

const policies = (key: string, method: string, path = '', body?: unknown) => api(base(), method, `/policies${path}`, { key, body });
async function createPolicy(key: string, body: Record<string, unknown>): Promise<any> {
  const res = await policies(key, 'POST', '', { name: 'test policy', ...body });
  expect(res.status).toBe(201);
  return res.body.policy;
}
const runTask = (key: string, body: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body });
const sendMessage = (key: string, sessionId: string, message: Record<string, unknown>) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message } });
const pollUntil = (sessionId: string, taskId: string, status: string) =>
  waitFor(async () => {
    const r = await api(base(), 'GET', `/task/${sessionId}/${taskId}`);
    return r.body.status === status ? r.body : null;
  }, 30_000);
const actionEvents = async (sessionId: string) =>
  (await db.collection<any>('events').find({ sessionId, 'payload.type': 'action' }).sort({ seq: 1 }).toArray()).map((e) => e.payload.data);
const sentToModel = async (match: string) => (await recordedRequests(model(), match)).map(requestText).join('\n');
const account = () => `${fixtures()}/account.html`;
const outcome = 'Result: {{find:(Account deleted|Settings saved[^\\n]*|Nothing done yet)}}; {{find:(Card digits entered: \\d+)}}';

describe('policies API', () => {
  it('creates, lists, reads, updates and deletes a policy; another user gets 404', async () => {
    const { apiKey: key } = await createUser();
    const body = {
      name: 'Careful shopper',
      description: 'no deletes, ask before paying',
      llmRole: 'Never accept cookies banners on your own.',
      domainRules: { mode: 'allowlist', domains: ['*.example.com', 'shop.example.org:8443'] },
      rules: [
        { effect: 'block', actionTypes: ['click_element'], keywords: ['delete'] },
        { effect: 'approve', urlPatterns: ['*/checkout*'], sensitiveData: ['card_number', { name: 'order_id', pattern: 'ORD-\\d{6}' }] },
        { effect: 'allow' },
      ],
    };
    const created = await policies(key, 'POST', '', body);
    expect(created.status).toBe(201);
    const policy = created.body.policy;
    expect(policy).toEqual({ _id: expect.stringMatching(/^pol_/), userId: expect.any(String), ...body, createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect((await policies(key, 'GET')).body).toEqual({ success: true, policies: [policy] });
    expect((await policies(key, 'GET', `/${policy._id}`)).body).toEqual({ success: true, policy });

    const updated = await policies(key, 'PUT', `/${policy._id}`, { name: 'Renamed', rules: [{ effect: 'approve', actionTypes: ['navigate'] }], llmRole: null });
    expect(updated.status).toBe(200);
    expect(updated.body.policy).toMatchObject({ name: 'Renamed', description: body.description, llmRole: null, domainRules: body.domainRules, rules: [{ effect: 'approve', actionTypes: ['navigate'] }] });

    const other = await createUser();
    for (const [method, payload] of [['GET'], ['PUT', { name: 'mine now' }], ['DELETE']] as const) {
      const res = await policies(other.apiKey, method, `/${policy._id}`, payload);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, code: 'POLICY_NOT_FOUND', message: 'Policy not found' });
    }
    expect((await policies(other.apiKey, 'GET')).body.policies).toEqual([]);
    expect((await policies(key, 'GET', `/${policy._id}`)).body.policy.name).toBe('Renamed');

    expect((await policies(key, 'DELETE', `/${policy._id}`)).body).toEqual({ success: true, message: 'Policy deleted' });
    expect((await policies(key, 'GET', `/${policy._id}`)).status).toBe(404);
    expect((await policies(key, 'DELETE', `/${policy._id}`)).status).toBe(404);
    expect((await policies(key, 'GET', '/pol_unknown')).status).toBe(404);
    expect((await api(base(), 'GET', '/policies')).status).toBe(401);
  });

  it('answers every bad request with a 400 that says what is wrong', async () => {
    const { apiKey: key } = await createUser();
    const cases: [unknown, number, Record<string, unknown>, string | RegExp][] = [
      [{}, 400, { code: 'MISSING_REQUIRED_FIELD', details: { field: 'name' } }, 'name is required'],
      [{ name: '   ' }, 400, { code: 'MISSING_REQUIRED_FIELD', details: { field: 'name' } }, 'name is required'],
      [{ name: 'x'.repeat(101) }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'name' } }, /name/],
      [{ name: 'p', rules: [{}] }, 400, { code: 'MISSING_REQUIRED_FIELD', details: { field: 'rules.0.effect' } }, 'rules.0.effect is required'],
      [{ name: 'p', rules: [{ effect: 'deny' }] }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'rules.0.effect', value: 'deny' } }, 'rules.0.effect must be one of: allow, block, approve'],
      [{ name: 'p', rules: [{ effect: 'block', actionTypes: ['hack'] }] }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'rules.0.actionTypes.0' } }, /must be one of: navigate, click_element/],
      [{ name: 'p', rules: [{ effect: 'block', keywords: 'delete' }] }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'rules.0.keywords' } }, 'rules.0.keywords must be an array'],
      [{ name: 'p', rules: [{ effect: 'block', sensitiveData: ['creditcard'] }] }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'rules.0.sensitiveData.0' } }, /must be one of card_number, iban, email, phone, api_key/],
      [{ name: 'p', rules: [{ effect: 'block', sensitiveData: [{ name: 'x', pattern: '(a)\\1' }] }] }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'rules.0.sensitiveData.0.pattern' } }, /not a valid RE2 regular expression/],
      [{ name: 'p', rules: [{ effect: 'block', sensitiveData: [{ name: 'x', pattern: 'a'.repeat(501) }] }] }, 400, { code: 'INVALID_PARAMETER' }, /at most 500 characters/],
      [{ name: 'p', rules: [{ effect: 'block', colour: 'red' }] }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'rules.0' } }, /colour/],
      [{ name: 'p', domainRules: { mode: 'allowlist', domains: [] } }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'domainRules.domains' } }, 'domainRules.domains: must list at least one domain when mode is allowlist'],
      [{ name: 'p', domainRules: { mode: 'blocklist', domains: ['https://evil.test/'] } }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'domainRules.domains.0' } }, /no scheme, path/],
      [{ name: 'p', domainRules: { mode: 'everything', domains: [] } }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'domainRules.mode' } }, 'domainRules.mode must be one of: allow_all, allowlist, blocklist'],
      [{ name: 'p', domainRules: { domains: ['a.com'] } }, 400, { code: 'MISSING_REQUIRED_FIELD', details: { field: 'domainRules.mode' } }, 'domainRules.mode is required'],
      [{ name: 'p', llmRole: 'x'.repeat(4001) }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'llmRole' } }, /llmRole/],
      [{ name: 'p', rules: Array.from({ length: 51 }, () => ({ effect: 'block' })) }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'rules', value: 51, max: 50 } }, 'A policy may have at most 50 rules'],
    ];
    for (const [body, status, shape, message] of cases) {
      const res = await policies(key, 'POST', '', body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.body).toMatchObject({ success: false, ...shape });
      expect(res.body.error).toBe(res.body.message);
      if (typeof message === 'string') expect(res.body.message).toBe(message);
      else expect(res.body.message).toMatch(message);
    }
    const malformed = await api(base(), 'POST', '/policies', { key, rawBody: '{"name": ' });
    expect(malformed.body).toMatchObject({ code: 'INVALID_PARAMS' });
    // nothing was stored by any of them
    expect((await policies(key, 'GET')).body.policies).toEqual([]);
    // an update is checked the same way and changes nothing when refused
    const p = await createPolicy(key, { rules: [{ effect: 'block', keywords: ['delete'] }] });
    const bad = await policies(key, 'PUT', `/${p._id}`, { name: 'ok', rules: [{ effect: 'nope' }] });
    expect(bad.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'rules.0.effect' } });
    expect((await policies(key, 'PUT', `/${p._id}`, { name: '' })).body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'name' } });
    expect((await policies(key, 'GET', `/${p._id}`)).body.policy).toMatchObject({ name: 'test policy', rules: [{ effect: 'block', keywords: ['delete'] }] });
  });

  it('keeps to 50 policies per user', async () => {
    const { apiKey: key } = await createUser();
    for (let i = 0; i < 50; i++) expect((await policies(key, 'POST', '', { name: `p${i}` })).status).toBe(201);
    const over = await policies(key, 'POST', '', { name: 'one too many' });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ success: false, code: 'POLICY_LIMIT_REACHED', message: 'Maximum of 50 policies per user', details: { limit: 50 } });
  });

  it('a policyId must name one of the caller\'s policies: start-session, run-task and triggers answer 404 POLICY_NOT_FOUND', async () => {
    const { apiKey: key } = await createUser();
    const other = await createUser();
    const foreign = await createPolicy(other.apiKey, {});
    const environmentId = (await api(base(), 'POST', '/environments', { key, body: { name: 'policies env' } })).body.environment._id;
    const notFound = { success: false, code: 'POLICY_NOT_FOUND', message: 'Policy not found' };
    for (const policyId of ['pol_unknown', foreign._id]) {
      const started = await api(base(), 'POST', '/start/start-session', { key, body: { policyId } });
      expect({ status: started.status, body: started.body }).toMatchObject({ status: 404, body: notFound });
      const ran = await runTask(key, { policyId, task: { prompt: 'x' } });
      expect({ status: ran.status, body: ran.body }).toMatchObject({ status: 404, body: notFound });
      const job = await api(base(), 'POST', '/cron-jobs', { key, body: { name: 'j', prompt: 'x', environmentId, policyId, scheduleType: 'every', scheduleInterval: '1d', deliveryMode: 'bot' } });
      expect({ status: job.status, body: job.body }).toMatchObject({ status: 404, body: notFound });
    }
    const empty = await api(base(), 'POST', '/start/start-session', { key, body: { policyId: '' } });
    expect(empty.body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'policyId' }, message: 'policyId must not be empty' });
    // nothing was started: no live session of the user
    expect((await api(base(), 'GET', '/start/active-sockets', { key })).body.sessions).toEqual([]);

    const mine = await createPolicy(key, {});
    const job = await api(base(), 'POST', '/cron-jobs', { key, body: { name: 'j', prompt: 'x', environmentId, policyId: mine._id, scheduleType: 'every', scheduleInterval: '1d', deliveryMode: 'bot' } });
    expect(job.status).toBe(201);
    expect(job.body.cronJob.policyId).toBe(mine._id);
    const moved = await api(base(), 'PUT', `/cron-jobs/${job.body.cronJob._id}`, { key, body: { policyId: foreign._id } });
    expect({ status: moved.status, body: moved.body }).toMatchObject({ status: 404, body: notFound });
    // a policy a trigger names is not deleted from under it
    const inUse = await policies(key, 'DELETE', `/${mine._id}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body).toMatchObject({ code: 'POLICY_IN_USE', details: { cronJobIds: [job.body.cronJob._id] } });
    await api(base(), 'PUT', `/cron-jobs/${job.body.cronJob._id}`, { key, body: { policyId: null } });
    expect((await policies(key, 'DELETE', `/${mine._id}`)).status).toBe(200);
    await api(base(), 'DELETE', `/cron-jobs/${job.body.cronJob._id}`, { key });
  });
});

describe('policies on agent actions', () => {
  it('a blocked click is not performed, the model is told, an action event says so, and the agent goes on', async () => {
    const { apiKey: key } = await createUser();
    const policy = await createPolicy(key, { llmRole: 'Be gentle with accounts.', rules: [{ effect: 'block', actionTypes: ['click_element'], keywords: ['delete'] }] });
    const t = token('blocked');
    await registerScript(model(), {
      match: t,
      steps: [{ tool: 'click_element', args: { index: { ref: 'Delete account' } } }, { tool: 'click_element', args: { index: { ref: 'Save settings' } } }, { tool: 'done', args: { message: outcome } }],
    });
    const res = await runTask(key, { policyId: policy._id, task: { prompt: `${t} tidy up the account`, startingUrl: account() } });
    expect(res.body).toMatchObject({ success: true, type: 'task_completed', data: { message: 'Result: Settings saved (note: none); Card digits entered: 0' } });
    const requests = await recordedRequests(model(), t);
    expect(requests[0].body.messages[0].content).toContain('Instructions of the automation policy:\nBe gentle with accounts.');
    expect(requestText(requests[1])).toContain(
      'Not performed: the automation policy blocks this action (rule 1 of the policy "test policy" (block) applies: the action is click_element, it mentions "delete").',
    );
    expect(await actionEvents(res.body.sessionId)).toEqual([
      { name: 'click_element', blocked: true, reason: 'rule 1 of the policy "test policy" (block) applies: the action is click_element, it mentions "delete"' },
      { name: 'click_element', target: 'button "Save settings"' },
      { name: 'done', target: 'success' },
    ]);
  });

  it('an approve rule pauses with approval_needed; approving performs the action', async () => {
    const { apiKey: key } = await createUser();
    const policy = await createPolicy(key, { rules: [{ effect: 'approve', keywords: ['delete'] }] });
    const t = token('approve');
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: { ref: 'Delete account' } } }, { tool: 'done', args: { message: outcome } }] });
    const res = await runTask(key, { policyId: policy._id, task: { prompt: `${t} close the account`, startingUrl: account() } });
    expect(res.body).toMatchObject({ success: true, type: 'guardrail_trigger', status: 'guardrail_trigger', data: { type: 'approval_needed' } });
    expect(res.body.data.value).toBe(
      `The agent wants to click "Delete account" on ${account()}; rule 1 of the policy "test policy" (approve) applies: it mentions "delete". Answer "approve" to let it, anything else refuses it.`,
    );
    const { sessionId, taskId } = res.body;
    // not performed while it waits
    expect(await actionEvents(sessionId)).toEqual([]);
    expect((await api(base(), 'GET', `/task/${sessionId}/${taskId}`)).body).toMatchObject({ status: 'guardrail_trigger', data: { type: 'approval_needed' } });
    expect((await sendMessage(key, sessionId, { actionType: 'guardrail', prompt: 'Approve', newState: 'resume' })).body).toMatchObject({ success: true });
    const done = await pollUntil(sessionId, taskId, 'task_completed');
    expect(done.data.message).toBe('Result: Account deleted; Card digits entered: 0');
    expect(await actionEvents(sessionId)).toEqual([{ name: 'click_element', target: 'button "Delete account"' }, { name: 'done', target: 'success' }]);
    expect(await sentToModel(t)).toContain('Approved by the human. Clicked');
  });

  it('an approval is bound to the element it was asked about: a page that moves the index meanwhile gets nothing clicked', async () => {
    const { apiKey: key } = await createUser();
    const policy = await createPolicy(key, { rules: [{ effect: 'approve', keywords: ['pay'] }] });
    const t = token('swap');
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: { ref: 'Pay now' } } }, { tool: 'done', args: { message: 'Result: {{find:(Nothing done yet|Paid|Account deleted)}}' } }] });
    const flag = `swap-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
    const res = await runTask(key, { policyId: policy._id, task: { prompt: `${t} pay the order`, startingUrl: `${fixtures()}/approval-swap.html?flag=${flag}` } });
    expect(res.body).toMatchObject({ type: 'guardrail_trigger', data: { type: 'approval_needed' } });
    expect(res.body.data.value).toContain('click "Pay now"');
    const { sessionId, taskId } = res.body;
    // The page moves the index to "Delete account" while the human reads the question.
    await fetch(`${fixtures()}/flag?raise=1&name=${flag}`);
    await waitFor(async () => ((await (await fetch(`${fixtures()}/flag?name=${flag}-moved`)).json()) as { raised: boolean }).raised || null, 10_000);
    await sendMessage(key, sessionId, { actionType: 'guardrail', prompt: 'approve', newState: 'resume' });
    const done = await pollUntil(sessionId, taskId, 'task_completed');
    expect(done.data.message).toBe('Result: Nothing done yet');
    expect(await sentToModel(t)).toMatch(/Not performed: the element \[\d+\] is no longer the one the human approved \(button "Pay now"\); it is now button "Delete account"/);
    expect(await actionEvents(sessionId)).toEqual([
      { name: 'click_element', refused: true, reason: 'the element changed after the approval was asked' },
      { name: 'done', target: 'success' },
    ]);
  });

  it('any other answer refuses the action and tells the model, which finds another way', async () => {
    const { apiKey: key } = await createUser();
    const policy = await createPolicy(key, { rules: [{ effect: 'approve', keywords: ['delete'] }] });
    const t = token('refuse');
    await registerScript(model(), {
      match: t,
      steps: [{ tool: 'click_element', args: { index: { ref: 'Delete account' } } }, { tool: 'click_element', args: { index: { ref: 'Save settings' } } }, { tool: 'done', args: { message: outcome } }],
    });
    const res = await runTask(key, { policyId: policy._id, task: { prompt: `${t} close the account`, startingUrl: account() } });
    expect(res.body).toMatchObject({ type: 'guardrail_trigger', data: { type: 'approval_needed' } });
    const { sessionId, taskId } = res.body;
    await sendMessage(key, sessionId, { actionType: 'guardrail', prompt: 'No, keep the account', newState: 'resume' });
    const done = await pollUntil(sessionId, taskId, 'task_completed');
    expect(done.data.message).toBe('Result: Settings saved (note: none); Card digits entered: 0');
    expect(await sentToModel(t)).toContain('Not performed: the human did not approve it (their answer: "No, keep the account").');
    expect(await actionEvents(sessionId)).toEqual([
      { name: 'click_element', refused: true, reason: 'not approved by the human' },
      { name: 'click_element', target: 'button "Save settings"' },
      { name: 'done', target: 'success' },
    ]);
  });

  it('catches a card number the agent would type; other text goes in', async () => {
    const { apiKey: key } = await createUser();
    const policy = await createPolicy(key, { rules: [{ effect: 'block', actionTypes: ['input_text'], sensitiveData: ['card_number', 'iban'] }] });
    const t = token('card');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Card number' }, text: '4111 1111 1111 1111' } },
        { tool: 'input_text', args: { index: { ref: 'Note' }, text: 'call me' } },
        { tool: 'click_element', args: { index: { ref: 'Save settings' } } },
        { tool: 'done', args: { message: outcome } },
      ],
    });
    const res = await runTask(key, { policyId: policy._id, task: { prompt: `${t} save my card`, startingUrl: account() } });
    expect(res.body).toMatchObject({ type: 'task_completed', data: { message: 'Result: Settings saved (note: call me); Card digits entered: 0' } });
    expect(await sentToModel(t)).toContain('what it would type or submit contains a card number');
    expect((await actionEvents(res.body.sessionId))[0]).toMatchObject({ name: 'input_text', blocked: true });
  });

  it('keeps the agent within the allowed domains: a navigation, a link and a script going elsewhere are blocked', async () => {
    const { apiKey: key } = await createUser();
    const fixturesHost = new URL(fixtures()).host;
    const policy = await createPolicy(key, { domainRules: { mode: 'allowlist', domains: [fixturesHost] } });
    const t = token('domains');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'navigate', args: { url: 'https://elsewhere.example.test/' } },
        { tool: 'click_element', args: { index: { ref: 'Partner offers' } } },
        // a script takes the page elsewhere: the navigation is stopped before it leaves
        { tool: 'click_element', args: { index: { ref: 'Visit partner' } } },
        { tool: 'done', args: { message: 'stayed on {{find:(Account settings)}}' } },
      ],
    });
    const res = await runTask(key, { policyId: policy._id, task: { prompt: `${t} look around`, startingUrl: account() } });
    expect(res.body).toMatchObject({ type: 'task_completed', data: { message: 'stayed on Account settings' } });
    const sent = await sentToModel(t);
    expect(sent).toContain(`elsewhere.example.test is not among the domains the policy "test policy" allows (${fixturesHost})`);
    expect(sent).toContain(`blocked.example.test is not among the domains the policy "test policy" allows (${fixturesHost})`);
    expect(sent).toContain(
      `the page tried to open https://blocked.example.test/partner, which was blocked: blocked.example.test is not among the domains the policy "test policy" allows (${fixturesHost}); the tab is back on ${account()})`,
    );
    expect((await actionEvents(res.body.sessionId)).map((e) => [e.name, e.blocked ?? false])).toEqual([
      ['navigate', true],
      ['click_element', true],
      ['click_element', false],
      ['done', false],
    ]);
  });

  it('a startingUrl the domain rules refuse fails the task with POLICY_BLOCKED', async () => {
    const { apiKey: key } = await createUser();
    const policy = await createPolicy(key, { domainRules: { mode: 'blocklist', domains: [new URL(fixtures()).hostname] } });
    const t = token('start-blocked');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'should not run' } }] });
    const res = await runTask(key, { policyId: policy._id, task: { prompt: `${t} go`, startingUrl: account() } });
    expect(res.body).toMatchObject({
      success: false,
      status: 'failed',
      code: 'POLICY_BLOCKED',
      error: `The startingUrl ${account()} is not allowed: 127.0.0.1 is blocked by the policy "test policy" (127.0.0.1)`,
      details: { url: account(), policyId: policy._id },
    });
    expect(await recordedRequests(model(), t)).toEqual([]);
  });

  it('a trigger\'s policy applies to its runs', async () => {
    const { apiKey: key } = await createUser();
    const policy = await createPolicy(key, { rules: [{ effect: 'block', keywords: ['delete'] }] });
    const environmentId = (await api(base(), 'POST', '/environments', { key, body: { name: 'policy runs' } })).body.environment._id;
    const t = token('trigger');
    await registerScript(model(), {
      match: t,
      steps: [{ tool: 'click_element', args: { index: { ref: 'Delete account' } } }, { tool: 'click_element', args: { index: { ref: 'Save settings' } } }, { tool: 'done', args: { message: outcome } }],
    });
    const created = await api(base(), 'POST', '/cron-jobs', {
      key,
      body: { name: 'nightly tidy', prompt: `${t} tidy up`, startingUrl: account(), environmentId, policyId: policy._id, scheduleType: 'every', scheduleInterval: '1d', deliveryMode: 'bot' },
    });
    expect(created.status).toBe(201);
    const id = created.body.cronJob._id;
    await api(base(), 'POST', `/cron-jobs/${id}/trigger`, { key });
    const run = await waitFor(async () => {
      const runs = (await api(base(), 'GET', `/cron-jobs/${id}/runs`, { key })).body.runs ?? [];
      return runs[0]?.status === 'completed' || runs[0]?.status === 'failed' ? runs[0] : null;
    }, 90_000, 1500);
    expect(run).toMatchObject({ status: 'completed', result: 'Result: Settings saved (note: none); Card digits entered: 0' });
    expect((await actionEvents(run.sessionId))[0]).toMatchObject({ name: 'click_element', blocked: true });
    expect(await sentToModel(t)).toContain('Not performed: the automation policy blocks this action');
    await api(base(), 'DELETE', `/cron-jobs/${id}`, { key });
  });
});
