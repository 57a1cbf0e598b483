import type { Step } from '../test/support/scripted-model';
import { LOGIN } from './site-server';
import { choose, click, done, type } from './steps';
import { DEV_TASKS } from './tasks-dev';
import { TEST_TASKS } from './tasks-test';
import { all, answerJson, answerNames, digits, fail, norm, pass, posted, reports, visited, type Outcome, type Verdict } from './verdicts';

export type Tier = 'easy' | 'medium' | 'hard';
export const TIERS: Tier[] = ['easy', 'medium', 'hard'];

/**
 * tuning: the tasks the agent and its prompts were tuned on; dev: newer pages of the kinds users
 * try first, tuned on from here; test: held-out tasks written before any tuning on them, run to
 * report, never to tune.
 */
export type Split = 'tuning' | 'dev' | 'test';
export const SPLITS: Split[] = ['tuning', 'dev', 'test'];

export interface EvalTask {
  id: string;
  tier: Tier;
  split: Split;
  /** The site (a folder of eval/sites/) and the page the task starts on. */
  site: string;
  start?: string;
  prompt: string;
  outputType?: 'text' | 'structured_json';
  outputSchema?: Record<string, unknown>;
  /** Task secrets: fields the agent types as <secret>name</secret> (matched to 127.0.0.1). */
  secrets?: Record<string, string>;
  /** Files uploaded with POST /files/upload before the task, given in its `files`. */
  files?: { name: string; content: string }[];
  /** What the suite answers when the agent asks the human. */
  guardrailAnswer?: string;
  verdict(o: Outcome): Verdict;
  /**
   * For the scripted model (the verdict tests, EVAL_SCRIPTED=1): the actions of an agent
   * doing it right, and a plausible wrong run: other actions, or only a wrong final answer.
   */
  scripted: { right: Step[]; wrong: Step[] | { answer: string } };
}

/** A task as written in its split's list. */
export type TaskSpec = Omit<EvalTask, 'split'>;

const CV = 'Grace Hopper\nCOBOL, compilers, Harvard Mark I\n';
const TEAM = [
  { name: 'Ada Lovelace', city: 'London' },
  { name: 'Alan Turing', city: 'Manchester' },
  { name: 'Grace Hopper', city: 'New York' },
];

const TUNING_TASKS: TaskSpec[] = [
  // ---- easy: one page ----
  {
    id: 'easy-read-price',
    tier: 'easy',
    site: 'e-price',
    prompt: 'What is the price of the Blue Kettle? Answer with the price only.',
    verdict: (o) => answerNames(o, /34\.90?\b/, [/29\.9/, /41\.0/]),
    scripted: { right: [done('{{find:Blue Kettle[\\s\\S]{0,40}?(\\$[\\d.]+)}}')], wrong: { answer: '$29.90' } },
  },
  {
    id: 'easy-read-status',
    tier: 'easy',
    site: 'e-order',
    prompt: 'What is the status of order #4471? Answer with the status only.',
    verdict: (o) => answerNames(o, /\bshipped\b/, [/delivered/, /processing/]),
    scripted: { right: [done('{{find:#4471[^\\n]*?(Shipped|Delivered|Processing)}}')], wrong: { answer: 'Delivered' } },
  },
  {
    id: 'easy-contact-form',
    tier: 'easy',
    site: 'e-contact',
    prompt: 'Fill in the contact form with the name "Ada Lovelace", the email "ada@example.com" and the message "Please send my invoice", then send it.',
    verdict: (o) => posted(o, 'thanks.html', { name: 'Ada Lovelace', email: 'ada@example.com', message: (v) => norm(v).includes('invoice') }),
    scripted: {
      right: [type('Name', 'Ada Lovelace'), type('Email', 'ada@example.com'), type('Message', 'Please send my invoice'), click('Send'), done('Sent')],
      // what a small model did: the name typed into the e-mail field, the e-mail never typed
      wrong: [type('Email', 'Ada Lovelace'), type('Message', 'Please send my invoice'), click('Send'), done('You have successfully sent the form')],
    },
  },
  {
    id: 'easy-pick-option',
    tier: 'easy',
    site: 'e-select',
    prompt: 'Set the newsletter frequency to Weekly and save.',
    verdict: (o) => posted(o, 'saved.html', { frequency: 'weekly' }),
    scripted: { right: [choose('Frequency', 'Weekly'), click('Save'), done('Saved')], wrong: [click('Save'), done('Saved')] },
  },
  {
    id: 'easy-tick-box',
    tier: 'easy',
    site: 'e-checkbox',
    prompt: 'Accept the terms of service (do not sign up for offers) and press Continue.',
    verdict: (o) => posted(o, 'welcome.html', { terms: 'on' }, ['offers']),
    scripted: {
      right: [click('I accept the terms of service'), click('Continue'), done('Account ready')],
      wrong: [click('Send me special offers'), click('I accept the terms of service'), click('Continue'), done('Account ready')],
    },
  },
  {
    id: 'easy-follow-link',
    tier: 'easy',
    site: 'e-link',
    prompt: 'Open the Shipping policy page and tell me within how many days returns are accepted. Answer with the number only.',
    verdict: (o) => all(visited(o, 'shipping.html') ? pass('shipping.html was opened') : fail('the shipping policy page was never opened'), answerNames(o, /\b45\b/, [/\b2\b/])),
    scripted: { right: [click('Shipping policy'), done('{{find:within (\\d+) days}}')], wrong: [done('2')] },
  },
  {
    id: 'easy-radio',
    tier: 'easy',
    site: 'e-radio',
    prompt: 'Choose the Standard plan and press Submit.',
    verdict: (o) => posted(o, 'chosen.html', { plan: 'standard' }),
    scripted: { right: [click('Standard'), click('Submit'), done('Standard plan chosen')], wrong: [click('Premium'), click('Submit'), done('Standard plan chosen')] },
  },
  {
    id: 'easy-add-to-cart',
    tier: 'easy',
    site: 'e-cart',
    prompt: 'Add the Green Mug to the cart. Add nothing else.',
    verdict: (o) => {
      const added = reports(o, 'add').map((r) => norm(r.product));
      if (!added.length) return fail('nothing was added to the cart');
      return added.length === 1 && added[0] === 'green mug' ? pass('the cart holds the Green Mug') : fail(`the cart got: ${added.join(', ')}`);
    },
    scripted: { right: [click('Add Green Mug to cart'), done('Added')], wrong: [click('Add White Mug to cart'), done('Added the Green Mug')] },
  },

  // ---- medium: a few pages ----
  {
    id: 'medium-search-paginate',
    tier: 'medium',
    site: 'm-search',
    prompt: 'Search the catalogue for "chair" and tell me the price of the Oak Rocking Chair. The results have several pages. Answer with the price only.',
    verdict: (o) =>
      all(
        o.records.some((r) => r.path === 'results.html' && norm(r.query.q).includes('chair')) ? pass('searched for chair') : fail('the site was never searched for "chair"'),
        answerNames(o, /\b149\b/, [/\b89\b/, /\b25\b/, /\b60\b/]),
      ),
    scripted: {
      right: [type('Search', 'chair'), { tool: 'send_keys', args: { keys: 'Enter' } }, click('Next page'), done('{{find:Oak Rocking Chair: (\\$\\d+)}}')],
      wrong: { answer: '$89' },
    },
  },
  {
    id: 'medium-login-secrets',
    tier: 'medium',
    site: 'm-login',
    prompt: 'Sign in with the username and password from your secrets, then change the city in the profile to Lyon and save the profile.',
    secrets: { username: LOGIN.username, password: LOGIN.password },
    verdict: (o) => {
      const v = posted(o, 'saved.html', { city: 'Lyon' });
      if (!v.pass) return v;
      return o.records.filter((r) => r.path === 'saved.html' && r.method === 'POST').at(-1)!.signedIn ? pass('the signed-in profile was saved with city Lyon') : fail('the profile was saved without a sign-in');
    },
    scripted: {
      right: [type('Username', '<secret>username</secret>'), type('Password', '<secret>password</secret>'), click('Sign in'), type('City', 'Lyon'), click('Save profile'), done('Saved')],
      wrong: [type('Username', 'ada'), type('Password', 'password'), click('Sign in'), done('Signed in and saved the city Lyon')],
    },
  },
  {
    id: 'medium-table-json',
    tier: 'medium',
    site: 'm-table',
    prompt: 'List every person in the team directory with their name and city.',
    outputType: 'structured_json',
    outputSchema: {
      type: 'object',
      properties: {
        people: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, city: { type: 'string' } }, required: ['name', 'city'], additionalProperties: false },
        },
      },
      required: ['people'],
      additionalProperties: false,
    },
    verdict: (o) => {
      const got = answerJson(o) as { people?: { name?: unknown; city?: unknown }[] } | null;
      if (!got || !Array.isArray(got.people)) return fail(o.answer === null ? `no answer (task ${o.status})` : 'the answer has no people list');
      const key = (p: { name?: unknown; city?: unknown }) => `${norm(p.name)} | ${norm(p.city)}`;
      const want = TEAM.map(key).sort();
      const have = got.people.map(key).sort();
      return JSON.stringify(want) === JSON.stringify(have) ? pass('all three people with their cities') : fail(`got ${have.join('; ')}`);
    },
    scripted: {
      right: [{ tool: 'done', args: { result: { people: TEAM.map((p) => ({ name: `{{find:(${p.name})}}`, city: `{{find:${p.name}[^\\n]*?(${p.city})}}` })) } } }],
      wrong: { answer: JSON.stringify({ people: [TEAM[0], { name: 'Alan Turing', city: 'London' }, TEAM[2]] }) },
    },
  },
  {
    id: 'medium-upload',
    tier: 'medium',
    site: 'm-upload',
    prompt: 'Apply for the job: enter the name Grace Hopper, attach the file cv-grace.txt as the CV and press Send application.',
    files: [{ name: 'cv-grace.txt', content: CV }],
    verdict: (o) => {
      const v = posted(o, 'sent.html', { name: 'Grace Hopper' });
      if (!v.pass) return v;
      const file = o.records.filter((r) => r.path === 'sent.html' && r.method === 'POST').at(-1)!.files.find((f) => f.field === 'cv');
      if (!file) return fail('the application was sent without a CV file');
      return file.filename === 'cv-grace.txt' && file.content === CV ? pass('the application came with cv-grace.txt') : fail(`the CV was ${file.filename} (${file.content.length} bytes)`);
    },
    scripted: {
      right: [type('Your name', 'Grace Hopper'), { tool: 'upload_file', args: { index: { ref: 'CV file' }, fileIds: ['{{find:(file_[0-9a-f]+)[^\\n]*cv-grace.txt}}'] } }, click('Send application'), done('Sent')],
      wrong: [type('Your name', 'Grace Hopper'), click('Send application'), done('Sent with the CV')],
    },
  },
  {
    id: 'medium-date',
    tier: 'medium',
    site: 'm-date',
    prompt: 'Book a table for 4 guests on 14 March 2026.',
    verdict: (o) => posted(o, 'booked.html', { date: '2026-03-14', guests: '4' }),
    scripted: {
      right: [type('Date', '2026-03-14'), choose('Guests', '4'), click('Book table'), done('Booked')],
      wrong: [type('Date', '2026-04-14'), choose('Guests', '4'), click('Book table'), done('Booked')],
    },
  },
  {
    id: 'medium-dependent-select',
    tier: 'medium',
    site: 'm-cascade',
    prompt: 'Set the delivery address to Toronto, Canada and save it.',
    verdict: (o) => posted(o, 'saved.html', { country: 'CA', city: 'Toronto' }),
    scripted: {
      right: [choose('Country', 'Canada'), choose('City', 'Toronto'), click('Save address'), done('Saved')],
      wrong: [choose('Country', 'Canada'), click('Save address'), done('Saved Toronto')],
    },
  },
  {
    id: 'medium-two-step-checkout',
    tier: 'medium',
    site: 'm-wizard',
    prompt: 'Check out with the name Joan Clarke and Express shipping, and place the order.',
    verdict: (o) => posted(o, 'done.html', { name: 'Joan Clarke', shipping: 'express' }),
    scripted: {
      right: [type('Name for the delivery', 'Joan Clarke'), click('Next'), click('Express'), click('Place order'), done('Order placed')],
      wrong: [type('Name for the delivery', 'Joan Clarke'), click('Next'), click('Place order'), done('Order placed with Express shipping')],
    },
  },
  {
    id: 'medium-filter-category',
    tier: 'medium',
    site: 'm-filter',
    prompt: 'Which product in the Garden category is the cheapest? Answer with its name only.',
    verdict: (o) => answerNames(o, /\btrowel\b/, [/pencil/, /rake/, /hose/, /watering/]),
    scripted: { right: [click('Garden'), done('{{find:(Trowel): \\$7}}')], wrong: { answer: 'Pencil' } },
  },

  // ---- hard ----
  {
    id: 'hard-new-tab',
    tier: 'hard',
    site: 'h-newtab',
    prompt: 'Open the price list (it opens in a new tab) and tell me the monthly price of the Gold plan. Answer with the price only.',
    verdict: (o) => all(visited(o, 'prices.html') ? pass('the price list was opened') : fail('the price list was never opened'), answerNames(o, /\b42\b/, [/\b24\b/, /\b19\b/])),
    scripted: { right: [click('Open the price list'), { tool: 'switch_tab', args: { index: 1 } }, done('{{find:Gold plan: (\\$\\d+)}}')], wrong: { answer: '24%' } },
  },
  {
    id: 'hard-iframe',
    tier: 'hard',
    site: 'h-iframe',
    prompt: 'Apply the voucher code ZX-81 at checkout.',
    verdict: (o) => {
      const applied = reports(o, 'voucher');
      if (!applied.length) return fail('no voucher was applied');
      const last = String(applied.at(-1)!.voucher ?? '');
      return last.trim().toUpperCase() === 'ZX-81' ? pass('voucher ZX-81 applied') : fail(`the voucher applied was ${JSON.stringify(last)}`);
    },
    scripted: { right: [type('Voucher code', 'ZX-81'), click('Apply voucher'), done('Applied')], wrong: [click('Apply voucher'), done('Applied ZX-81')] },
  },
  {
    id: 'hard-shadow-dom',
    tier: 'hard',
    site: 'h-shadow',
    prompt: 'Subscribe to the newsletter with the email grace@example.com.',
    verdict: (o) => {
      const subs = reports(o, 'subscribe');
      if (!subs.length) return fail('nobody was subscribed');
      return norm(subs.at(-1)!.email) === 'grace@example.com' ? pass('grace@example.com subscribed') : fail(`subscribed ${JSON.stringify(subs.at(-1)!.email)}`);
    },
    scripted: { right: [type('Your email', 'grace@example.com'), click('Subscribe'), done('Subscribed')], wrong: [click('Subscribe'), done('Subscribed grace@example.com')] },
  },
  {
    id: 'hard-modal',
    tier: 'hard',
    site: 'h-modal',
    prompt: 'Reject all cookies, then ask for a callback to the phone number 555-0100.',
    verdict: (o) => {
      const consent = reports(o, 'consent').at(-1)?.consent;
      if (consent !== 'rejected') return fail(`cookies were ${consent === undefined ? 'never answered' : String(consent)}`);
      return posted(o, 'requested.html', { phone: (v) => digits(v) === '5550100' });
    },
    scripted: {
      right: [click('Reject all cookies'), type('Phone number', '555-0100'), click('Call me back'), done('Callback requested')],
      wrong: [click('Accept all cookies'), type('Phone number', '555-0100'), click('Call me back'), done('Rejected cookies; callback requested')],
    },
  },
  {
    id: 'hard-infinite-list',
    tier: 'hard',
    site: 'h-infinite',
    prompt: 'What is the amount of invoice #1025? More invoices appear as you scroll down. Answer with the amount only.',
    verdict: (o) => answerNames(o, /512[.,]40?\b/),
    scripted: {
      right: [
        { tool: 'scroll', args: { direction: 'down', amount: 1 } },
        { tool: 'wait', args: { seconds: 1 } },
        { tool: 'scroll', args: { direction: 'down', amount: 1 } },
        { tool: 'wait', args: { seconds: 1 } },
        { tool: 'extract', args: { query: 'invoice #1025' } },
        done('{{find:Invoice #1025: (€[\\d.]+)}}'),
      ],
      wrong: { answer: '€255.15' },
    },
  },
  {
    id: 'hard-guardrail',
    tier: 'hard',
    site: 'h-guardrail',
    prompt: 'Confirm the transfer. You do not know the confirmation code: ask me for it, then enter it and confirm.',
    guardrailAnswer: 'The confirmation code is 731904.',
    verdict: (o) => posted(o, 'confirmed.html', { code: (v) => digits(v) === '731904' }),
    scripted: {
      right: [
        { tool: 'request_human_input', args: { type: 'two_factor_code', value: 'What is the confirmation code sent to your phone?' } },
        type('Confirmation code', '{{find:code is (\\d{6})}}'),
        click('Confirm transfer'),
        done('Confirmed'),
      ],
      // a guessed code, without asking
      wrong: [type('Confirmation code', '123456'), click('Confirm transfer'), done('Confirmed')],
    },
  },
  {
    id: 'hard-layout-differs',
    tier: 'hard',
    site: 'h-layout',
    prompt: 'Type Alan Turing into the "Full name" field and click the blue Submit button at the bottom of the form.',
    verdict: (o) => posted(o, 'received.html', { person: 'Alan Turing' }),
    scripted: {
      right: [type('Your name (as in your passport)', 'Alan Turing'), click('Send request'), done('Submitted')],
      wrong: [type('Company', 'Alan Turing'), click('Send request'), done('Submitted')],
    },
  },
  {
    id: 'hard-custom-listbox',
    tier: 'hard',
    site: 'h-listbox',
    prompt: "Set the ticket's priority to High and save the ticket.",
    verdict: (o) => {
      const saves = reports(o, 'save');
      if (!saves.length) return fail('the ticket was never saved');
      return norm(saves.at(-1)!.priority) === 'high' ? pass('saved with priority High') : fail(`saved with priority ${JSON.stringify(saves.at(-1)!.priority)}`);
    },
    scripted: { right: [click('Priority'), click('High'), click('Save ticket'), done('Saved')], wrong: [click('Save ticket'), done('Saved with priority High')] },
  },
];

export const TASKS: EvalTask[] = [
  ...TUNING_TASKS.map((t) => ({ ...t, split: 'tuning' as const })),
  ...DEV_TASKS.map((t) => ({ ...t, split: 'dev' as const })),
  ...TEST_TASKS.map((t) => ({ ...t, split: 'test' as const })),
];

/** EVAL_SPLIT: tuning (the default), dev, test, or all. */
export function parseSplit(value: string | undefined): Split | 'all' {
  const v = (value ?? '').trim() || 'tuning';
  if (v === 'all' || SPLITS.includes(v as Split)) return v as Split | 'all';
  throw new Error(`EVAL_SPLIT must be ${SPLITS.join(', ')} or all, not "${v}"`);
}

/**
 * Tasks chosen by EVAL_SPLIT and EVAL_TASKS (a comma list of task ids and tier names): a tier
 * name selects that tier of the split, a task id selects that task whatever its split; the
 * whole split when EVAL_TASKS is empty.
 */
export function selectTasks(spec: string | undefined, split: Split | 'all' = 'tuning'): EvalTask[] {
  const wanted = (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const inSplit = (t: EvalTask) => split === 'all' || t.split === split;
  if (!wanted.length) return TASKS.filter(inSplit);
  const unknown = wanted.filter((w) => !TIERS.includes(w as Tier) && !TASKS.some((t) => t.id === w));
  if (unknown.length) throw new Error(`EVAL_TASKS names no task or tier: ${unknown.join(', ')} (tiers: ${TIERS.join(', ')}; tasks: ${TASKS.map((t) => t.id).join(', ')})`);
  return TASKS.filter((t) => wanted.includes(t.id) || (wanted.includes(t.tier) && inSplit(t)));
}
