/**
 * Verified results: a task's `verify` checks run on the final page when the agent calls
 * done; a failed check is told to the agent, which goes on; after 3 such tellings the task
 * fails with TASK_NOT_VERIFIED. Webhooks of a verified task go out after the checks passed,
 * with the verdicts.
 */
import { api, waitFor } from '../support/http';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';
import { createUser } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

describe('verified results', () => {
  it('tells the agent a done whose textVisible is not on the page, lets it finish the job, and the webhook carries the verdicts', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('verify-text');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'done', args: { message: 'Sent the form' } },
        { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada' } },
        { tool: 'click_element', args: { index: { ref: 'Send' } } },
        { tool: 'done', args: { message: 'The page says: {{find:(Thanks, [A-Za-z]+!)}}' } },
      ],
    });
    const res = await runTask(key, {
      prompt: `${t} send the contact form as Ada`,
      startingUrl: `${fixtures()}/form.html`,
      verify: [{ textVisible: 'thanks,   ADA!' }, { urlMatches: '*/thanks.html?*' }],
      webhook: { name: 'verified', url: receiver.url('/verified'), submittedData: 'ai_response' },
    });
    expect(res.status).toBe(200);
    const verification = {
      passed: true,
      attempts: 2,
      checks: [
        { check: 'textVisible', value: 'thanks,   ADA!', passed: true, reason: 'The text is on the page' },
        { check: 'urlMatches', value: '*/thanks.html?*', passed: true, reason: expect.stringContaining('/thanks.html?name=Ada') },
      ],
    };
    expect(res.body).toMatchObject({ status: 'task_completed', data: { message: 'The page says: Thanks, Ada!', verification } });
    // The agent was told which checks failed after its first done.
    const requests = await recordedRequests(model(), t);
    expect(requests).toHaveLength(4);
    expect(requestText(requests[1])).toContain('Not accepted: the result was checked and these checks failed:\n- textVisible "thanks,   ADA!": The text is not on the page\n- urlMatches "*/thanks.html?*": The page is at');
    const [delivery] = await waitFor(async () => (receiver.at('/verified').length ? receiver.at('/verified') : null), 20_000);
    expect(delivery.json).toMatchObject({ type: 'task_completed', data: { message: 'The page says: Thanks, Ada!', verification } });
    // Polling answers the same.
    const polled = await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`, { key });
    expect(polled.body.data.verification).toMatchObject(verification);
  });

  it('fails with TASK_NOT_VERIFIED and the verdicts when the result fails its checks after 3 tellings', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('verify-fail');
    await registerScript(model(), { match: t, steps: Array.from({ length: 6 }, () => ({ tool: 'done', args: { message: 'Done, trust me' } })) });
    const res = await runTask(key, { prompt: `${t} log out`, startingUrl: `${fixtures()}/about.html`, verify: [{ elementVisible: 'button "Log out"' }, { textVisible: 'About' }] });
    expect(res.body).toMatchObject({
      success: false,
      status: 'failed',
      code: 'TASK_NOT_VERIFIED',
      details: {
        checks: [
          { check: 'elementVisible', value: 'button "Log out"', passed: false, reason: 'No visible element fits the description' },
          { check: 'textVisible', value: 'About', passed: true },
        ],
      },
    });
    // Told 3 times, failed at the 4th done.
    expect(await recordedRequests(model(), t)).toHaveLength(4);
  });

  it('judges a criteria check with a separate model call from the final page and the answer, and records its reason', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('verify-judge');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'done', args: { message: 'The form is on the page' } },
        { tool: 'verdict', args: { met: false, reason: 'The page shows the empty form, nothing was sent' } },
        { tool: 'done', args: { message: 'The form is on the page and has a Send button' } },
        { tool: 'verdict', args: { met: true, reason: 'The page shows the contact form with its Send button' } },
      ],
    });
    const res = await runTask(key, { prompt: `${t} find the contact form`, startingUrl: `${fixtures()}/form.html`, verify: [{ criteria: 'The answer describes the form on the page' }, { elementVisible: 'button "Send"' }] });
    expect(res.body).toMatchObject({
      status: 'task_completed',
      data: {
        verification: {
          passed: true,
          attempts: 2,
          checks: [
            { check: 'criteria', value: 'The answer describes the form on the page', passed: true, reason: 'The page shows the contact form with its Send button' },
            { check: 'elementVisible', value: 'button "Send"', passed: true },
          ],
        },
      },
    });
    const requests = await recordedRequests(model(), t);
    expect(requests).toHaveLength(4);
    // The judge's call: its own tool, the criterion, the answer and the final page; none of the agent's conversation.
    const judge = requests[1];
    expect(judge.body.tools.map((tool: any) => tool.function.name)).toEqual(['verdict']);
    expect(requestText(judge)).toContain('Criterion: The answer describes the form on the page');
    expect(requestText(judge)).toContain("The agent's final answer: The form is on the page");
    expect(requestText(judge)).toContain('Contact form');
    // The agent heard the judge's reason, and the task's usage counts the judge's calls.
    expect(requestText(requests[2])).toContain('criteria "The answer describes the form on the page": The page shows the empty form, nothing was sent');
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('refuses verify checks that are empty, unknown or too many', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    for (const verify of [[], [{ textVisible: '  ' }], [{ pageLooksNice: 'yes' }], [{ textVisible: 'a', urlMatches: 'b' }], Array.from({ length: 11 }, () => ({ textVisible: 'x' }))]) {
      const res = await runTask(key, { prompt: 'p', verify });
      expect([JSON.stringify(verify).slice(0, 40), res.status, res.body.code]).toEqual([JSON.stringify(verify).slice(0, 40), 400, expect.stringMatching(/^(INVALID_PARAMETER|MISSING_REQUIRED_FIELD)$/)]);
      expect([res.body.details?.parameter, res.body.details?.field, res.body.message]).toContainEqual(expect.stringMatching(/task\.verify/));
    }
  });
});
