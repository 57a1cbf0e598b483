/**
 * An answer carrying several actions, through the agent runner on a real page: one action per
 * step, the later ones without a model call, each policed and recorded on its own, the list
 * stopped where the page changes.
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { runnerOn as runnerOnTab, runSteps, scriptedLlm as scriptedModel, toolAnswers, type Call } from '../../test/support/agent-runner';
import type { PolicyDocument } from '../contracts/policy-rules';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run'];

/** A form of two fields and a submit; `reveal`: typing a name shows one more field. */
const formPage = (reveal: boolean) => `<!doctype html><title>Sign up</title><h1>Sign up</h1>
  <form action="/sent" method="get">
    <p><label for="name">Name</label> <input id="name" name="name" ${reveal ? `oninput="document.getElementById('more').hidden = false"` : ''}></p>
    <p id="more" hidden><label for="company">Company</label> <input id="company" name="company"></p>
    <p><label for="email">Email</label> <input id="email" name="email"></p>
    <p><button type="submit">Send</button></p>
  </form>`;

/** A search form with links of its own above it. */
const searchPage = `<!doctype html><title>Staybird</title><form action="/results"><label for="city">Where are you going?</label> <input id="city" name="city"> <button type="submit">Search stays</button></form>
  <p>Popular: <a href="/results?city=Lisbon">Lisbon</a> <a href="/results?city=Seville">Seville</a></p>`;

let browser: Browser;
let context: BrowserContext;
let page: Page;
let sent: URLSearchParams[];

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
});
afterAll(() => browser?.close());
beforeEach(async () => {
  sent = [];
  context = await browser.newContext({ viewport: { width: 1024, height: 600 } });
  await context.route('http://form.test/**', (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/sent') {
      sent.push(url.searchParams);
      return route.fulfill({ contentType: 'text/html', body: `<!doctype html><title>Thanks</title><p>Thanks, ${url.searchParams.get('name')}</p>` });
    }
    if (url.pathname === '/search') return route.fulfill({ contentType: 'text/html', body: searchPage });
    if (url.pathname === '/results') return route.fulfill({ contentType: 'text/html', body: `<!doctype html><title>Stays</title><h1>Stays in ${url.searchParams.get('city')}</h1>` });
    return route.fulfill({ contentType: 'text/html', body: formPage(url.pathname === '/reveal') });
  });
  page = await context.newPage();
});
afterEach(() => context.close());

const fillAndSend: Call[] = [
  { tool: 'input_text', args: { index: 1, text: 'Ada' } },
  { tool: 'input_text', args: { index: 2, text: 'ada@example.com' } },
  { tool: 'click_element', args: { index: 3 } },
];
const done: Call[] = [{ tool: 'done', args: { message: 'Signed up' } }];
const giveUp: Call[] = [{ tool: 'done', args: { message: 'Cannot sign up', success: false } }];
const tab = { get page() { return page; }, set page(p: Page) { page = p; }, get context() { return context; } };
const runnerOn = (llm: Parameters<typeof runnerOnTab>[1], policy?: PolicyDocument) => runnerOnTab(tab, llm, policy);

describe('an answer with several actions', () => {
  it('performs them one per step with one model call, each recorded, and the page they lead to is the next observation', async () => {
    await page.goto('http://form.test/form');
    const { llm, requests } = scriptedModel([fillAndSend, done]);
    const { runner, recorded } = runnerOn(llm);
    const results = await runSteps(runner, 6);
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'input_text'],
      ['continue', 'input_text'],
      ['continue', 'click_element'],
      ['done', 'done'],
    ]);
    expect(requests).toHaveLength(2);
    expect(sent.map((q) => Object.fromEntries(q))).toEqual([{ name: 'Ada', company: '', email: 'ada@example.com' }]);
    expect(recorded.map((s) => [s.action, s.outcome, s.element?.name])).toEqual([
      ['input_text', 'ok', 'Name'],
      ['input_text', 'ok', 'Email'],
      ['click_element', 'ok', 'Send'],
      ['done', 'ok', undefined],
    ]);
    // Only the first step's result carries the model's tokens.
    expect(results.map((r) => r.usage.inputTokens)).toEqual([100, 0, 0, 100]);
    // Every call of the list answered before the model is asked again; the page says what changed.
    const second = requests[1];
    expect(toolAnswers(second)).toEqual([expect.stringContaining('Typed "Ada"'), expect.stringContaining('Typed "ada@example.com"'), expect.stringContaining('Clicked')]);
    const observation = second[second.length - 1].content;
    expect(observation).toMatch(/^Observation \(step 4\):\nURL: http:\/\/form\.test\/sent\?[^]*\nChanged: URL is now http:\/\/form\.test\/sent\?\S+; title is now "Thanks"\nNote: the form you filled was sent and a new page opened: if the task asks for nothing more, call done\.\nYour task: .+$/);
  });

  it('stops the list at the first action that changes the page, and says which ran and which did not', async () => {
    await page.goto('http://form.test/reveal');
    const { llm, requests } = scriptedModel([fillAndSend, giveUp]);
    const { runner, recorded } = runnerOn(llm);
    const results = await runSteps(runner, 6);
    expect(results.map((r) => r.action?.name)).toEqual(['input_text', 'done']);
    expect(requests).toHaveLength(2);
    expect(await page.inputValue('#email')).toBe('');
    expect(sent).toEqual([]);
    expect(recorded.map((s) => s.action)).toEqual(['input_text', 'done']);
    const answers = toolAnswers(requests[1]);
    expect(answers[0]).toContain('Typed "Ada"');
    expect(answers.slice(1)).toEqual([
      'Not performed: the list stopped after input_text [1], which changed the page (1 element appeared). Look at the page again.',
      'Not performed: the list stopped after input_text [1], which changed the page (1 element appeared). Look at the page again.',
    ]);
  });

  it('puts each action of the list to the policy on its own: a blocked one is recorded as such and ends the list', async () => {
    await page.goto('http://form.test/form');
    const policy: PolicyDocument = { _id: 'pol_1', name: 'No clicks', domainRules: { mode: 'allow_all', domains: [] }, rules: [{ effect: 'block', actionTypes: ['click_element'] }] };
    const { llm, requests } = scriptedModel([[...fillAndSend, { tool: 'input_text', args: { index: 1, text: 'Bob' } }], giveUp]);
    const { runner, recorded } = runnerOn(llm, policy);
    const results = await runSteps(runner, 6, { policyId: 'pol_1' });
    expect(results.map((r) => r.action?.name)).toEqual(['input_text', 'input_text', 'click_element', 'done']);
    expect(recorded.map((s) => [s.action, s.outcome])).toEqual([
      ['input_text', 'ok'],
      ['input_text', 'ok'],
      ['click_element', 'blocked'],
      ['done', 'ok'],
    ]);
    expect(await page.inputValue('#name')).toBe('Ada');
    expect(requests).toHaveLength(2);
    const answers = toolAnswers(requests[1]);
    expect(answers[2]).toMatch(/^Not performed: the automation policy blocks this action/);
    expect(answers[3]).toBe('Not performed: the list stopped because click_element [3] before it was not performed.');
  });

  it('takes done only as the last action of a list', async () => {
    await page.goto('http://form.test/form');
    const { llm, requests } = scriptedModel([[fillAndSend[0], done[0], fillAndSend[1]], giveUp]);
    const { runner } = runnerOn(llm);
    const results = await runSteps(runner, 6);
    expect(results.map((r) => r.action?.name)).toEqual(['input_text', 'done']);
    expect(toolAnswers(requests[1])).toEqual([
      'Not performed: done may only be the last action of a list.',
      'Not performed: done before it was not the last action of the list.',
      expect.stringContaining('Typed "Ada"'),
    ]);
  });

  it('begins at the first typing when a link of the page is pressed before it, the presses before it answered as not performed', async () => {
    await page.goto('http://form.test/search');
    const links: Call[] = [
      { tool: 'click_element', args: { index: 3 } },
      { tool: 'click_element', args: { index: 2 } },
      { tool: 'input_text', args: { index: 1, text: 'Ghent' } },
      { tool: 'click_element', args: { index: 2 } },
    ];
    const { llm, requests } = scriptedModel([links, giveUp]);
    const { runner, recorded } = runnerOn(llm);
    const results = await runSteps(runner, 6);
    expect(results.map((r) => r.action?.name)).toEqual(['input_text', 'click_element', 'done']);
    expect(recorded.map((s) => [s.action, s.element?.name])).toEqual([
      ['input_text', 'Where are you going?'],
      ['click_element', 'Search stays'],
      ['done', undefined],
    ]);
    expect(page.url()).toBe('http://form.test/results?city=Ghent');
    const note = 'Not performed: click_element [3] is a link: it would open another page and end the list before input_text [1], so the list began at input_text [1]. Press what sends the form after the typing.';
    expect(toolAnswers(requests[1]).slice(0, 3)).toEqual([note, note, expect.stringContaining('Typed "Ghent"')]);
  });
});
