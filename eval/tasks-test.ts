import { BANK_LOGIN } from './site-server';
import { choose, click, done, scrollDown, type, wait } from './steps';
import type { TaskSpec } from './tasks';
import { all, answerNames, digits, fail, norm, pass, posted, reports, type Outcome, type Verdict, visitedWith } from './verdicts';

/**
 * The test split: held-out tasks on sites of their own (eval/sites/te-*, tm-*, th-*), worded
 * as a user would ask, written before any tuning on them. They are run to report, never to
 * tune the agent or its prompts on.
 */

const compact = (v: unknown) => norm(v).replace(/\s/g, '');

/** The answer's digits hold `want` and none of the distractors' digits. */
function answerHasNumber(o: Outcome, want: string, forbid: string[]): Verdict {
  if (o.answer === null) return fail(`no answer (task ${o.status}${o.code ? ` ${o.code}` : ''})`);
  const got = digits(o.answer);
  if (!got.includes(want)) return fail(`the answer "${o.answer}" does not give ${want}`);
  const wrong = forbid.find((f) => got.includes(f));
  return wrong ? fail(`the answer "${o.answer}" also gives ${wrong}`) : pass(`the answer gives ${want}`);
}

const EASY: TaskSpec[] = [
  {
    id: 'test-easy-spec-value',
    tier: 'easy',
    site: 'te-spec',
    prompt: 'How heavy is the Corvid 14 laptop?',
    verdict: (o) => answerNames(o, /\b1[.,]38\b/, [/1[.,]92/, /0[.,]21/]),
    scripted: { right: [done('{{find:Weight\\W{0,20}(1\\.\\d+ kg)}}')], wrong: { answer: 'It weighs 1.92 kg.' } },
  },
  {
    id: 'test-easy-tab-read',
    tier: 'easy',
    site: 'te-tabs',
    prompt: 'How many working days does delivery of the Alder standing desk take?',
    verdict: (o) =>
      all(
        reports(o, 'tab').some((r) => r.tab === 'tab-delivery') ? pass('the delivery tab was opened') : fail('the delivery tab was never opened'),
        answerNames(o, /\b6\b/, [/\b30\b/, /\b20\b/]),
      ),
    scripted: { right: [click('Delivery & returns'), done('{{find:in (\\d+) working days}}')], wrong: { answer: '30 days' } },
  },
  {
    id: 'test-easy-two-field-form',
    tier: 'easy',
    site: 'te-webinar',
    prompt: 'Sign Katherine Johnson up for the webinar. Her e-mail is katherine.johnson@example.org.',
    verdict: (o) => posted(o, 'seat.html', { full_name: 'Katherine Johnson', email: 'katherine.johnson@example.org' }),
    scripted: {
      right: [type('Full name', 'Katherine Johnson'), type('Work e-mail', 'katherine.johnson@example.org'), click('Reserve my seat'), done('Seat reserved')],
      wrong: [type('Full name', 'Katherine Johnson katherine.johnson@example.org'), type('Work e-mail', 'katherine@example.org'), click('Reserve my seat'), done('Seat reserved')],
    },
  },
  {
    id: 'test-easy-checkboxes',
    tier: 'easy',
    site: 'te-alerts',
    prompt: 'I want delivery updates by text message, but no more product news e-mails. Change my notification settings accordingly.',
    verdict: (o) => posted(o, 'saved.html', { sms: 'on' }, ['news', 'partners']),
    scripted: {
      right: [click('Delivery updates by text message'), click('Product news by e-mail'), click('Save settings'), done('Saved')],
      wrong: [click('Delivery updates by text message'), click('Save settings'), done('Saved')],
    },
  },
  {
    id: 'test-easy-size-colour',
    tier: 'easy',
    site: 'te-tshirt',
    prompt: 'Put this T-shirt in my bag in navy, size L.',
    verdict: (o) => posted(o, 'bag.html', { size: 'L', colour: 'navy' }),
    scripted: {
      right: [choose('Colour', 'Navy'), click('Large'), click('Add to bag'), done('Added')],
      wrong: [choose('Colour', 'Navy'), click('Add to bag'), done('Added a navy T-shirt in size L')],
    },
  },
];

const MEDIUM: TaskSpec[] = [
  {
    id: 'test-medium-signin-read',
    tier: 'medium',
    site: 'tm-bank',
    prompt: "Log in to my online banking and tell me how much money is in my savings account. You'll find my customer number and PIN in your secrets.",
    secrets: { customer_number: BANK_LOGIN.customer, pin: BANK_LOGIN.pin },
    verdict: (o) =>
      all(
        o.records.some((r) => r.path === 'accounts.html' && r.method === 'POST' && r.fields.customer === BANK_LOGIN.customer && r.fields.pin === BANK_LOGIN.pin)
          ? pass('logged in')
          : fail('never logged in with the customer number and PIN'),
        answerNames(o, /8,?316([.,]20?)?\b/, [/1,?204/, /\b240\b/]),
      ),
    scripted: {
      right: [type('Customer number', '<secret>customer_number</secret>'), type('PIN', '<secret>pin</secret>'), click('Log in'), done('{{find:Savings account[\\s\\S]{0,40}?(€[\\d,.]+)}}')],
      wrong: { answer: '€1,204.55' },
    },
  },
  {
    id: 'test-medium-cheapest-result',
    tier: 'medium',
    site: 'tm-hotels',
    prompt: "What's the cheapest place to stay in Porto on Stayfinder? I need its phone number.",
    verdict: (o) => all(visitedWith(o, 'hotel.html', { id: 'casa-do-rio' }), answerHasNumber(o, '222040117', ['222310500', '222087664', '222991302'])),
    scripted: {
      right: [type('Destination', 'Porto'), click('Search'), click('Casa do Rio'), done('{{find:Phone: ([+\\d ]+)}}')],
      wrong: [type('Destination', 'Porto'), click('Search'), click('Hotel Ribeira Palace'), done('{{find:Phone: ([+\\d ]+)}}')],
    },
  },
  {
    id: 'test-medium-five-field-form',
    tier: 'medium',
    site: 'tm-parcel',
    prompt: 'I am sending a parcel to Mary Jackson, 12 Harbour Road, Bristol BS1 4QA, phone 0117 496 0321. Fill in the recipient and continue.',
    verdict: (o) =>
      posted(o, 'review.html', {
        name: 'Mary Jackson',
        street: '12 Harbour Road',
        postcode: (v) => compact(v) === 'bs14qa',
        town: 'Bristol',
        phone: (v) => digits(v) === '01174960321' || digits(v) === '441174960321',
      }),
    scripted: {
      right: [
        type('Recipient name', 'Mary Jackson'),
        type('Street and number', '12 Harbour Road'),
        type('Postcode', 'BS1 4QA'),
        type('Town', 'Bristol'),
        type('Phone (for the courier)', '0117 496 0321'),
        click('Continue'),
        done('Continued'),
      ],
      wrong: [type('Recipient name', 'Mary Jackson'), type('Street and number', '12 Harbour Road'), type('Town', 'Bristol BS1 4QA'), type('Phone (for the courier)', '0117 496 0321'), click('Continue'), done('Continued')],
    },
  },
  {
    id: 'test-medium-second-page',
    tier: 'medium',
    site: 'tm-events',
    prompt: "What's on at the climbing club on 18 June?",
    verdict: (o) => answerNames(o, /night bouldering/, [/barbecue/, /kids/, /outdoor day/, /members/]),
    scripted: { right: [click('Next page'), done('{{find:18 June: ([^\\n]+)}}')], wrong: { answer: 'Outdoor day at the quarry' } },
  },
  {
    id: 'test-medium-dependent-select',
    tier: 'medium',
    site: 'tm-car',
    prompt: 'Get an insurance quote for my car, a Volvo V60 from 2019.',
    verdict: (o) => posted(o, 'quote.html', { make: 'volvo', model: 'V60', year: '2019' }),
    scripted: {
      right: [choose('Make', 'Volvo'), choose('Model', 'V60'), choose('Year of manufacture', '2019'), click('Get my quote'), done('{{find:(€[\\d.]+ a month)}}')],
      wrong: [choose('Make', 'Volvo'), choose('Model', 'V60'), click('Get my quote'), done('Quote requested')],
    },
  },
];

const HARD: TaskSpec[] = [
  {
    id: 'test-hard-combobox',
    tier: 'hard',
    site: 'th-flights',
    prompt: 'Search for flights from Lisbon to Oslo.',
    verdict: (o) => posted(o, 'results.html', { from: 'LIS', to: 'OSL' }),
    scripted: {
      right: [type('From', 'Lis'), click('Lisbon (LIS)'), type('To', 'Osl'), click('Oslo (OSL)'), click('Search flights'), done('Searched')],
      wrong: [type('From', 'Lis'), click('Lisbon (LIS)'), type('To', 'Osl'), click('Oslo Torp (TRF)'), click('Search flights'), done('Searched flights to Oslo')],
    },
  },
  {
    id: 'test-hard-date-picker',
    tier: 'hard',
    site: 'th-vet',
    prompt: 'Book a vet appointment for my dog Biscuit on 3 September 2026 at 10:30.',
    verdict: (o) => posted(o, 'booked.html', { pet: 'Biscuit', species: 'Dog', date: '2026-09-03', time: '10:30' }),
    scripted: {
      right: [
        type("Pet's name", 'Biscuit'),
        click('Open calendar'),
        click('Next month'),
        click('Next month'),
        click('Next month'),
        click('Thursday 3 September 2026'),
        choose('Time', '10:30'),
        click('Book appointment'),
        done('Booked'),
      ],
      wrong: [type("Pet's name", 'Biscuit'), click('Open calendar'), click('Next month'), click('Next month'), click('Monday 3 August 2026'), choose('Time', '10:30'), click('Book appointment'), done('Booked for 3 September')],
    },
  },
  {
    id: 'test-hard-infinite-reviews',
    tier: 'hard',
    site: 'th-reviews',
    prompt: 'A customer called marco_p reviewed this mug. What was the title of the review?',
    verdict: (o) => answerNames(o, /cracked lid/),
    scripted: {
      right: [...[1, 2, 3, 4, 5, 6].flatMap(() => [scrollDown(), wait(1)]), { tool: 'extract', args: { query: 'the review by marco_p' } }, done('{{find:([^\\n]*)\\n[^\\n]*by marco_p}}')],
      wrong: { answer: 'Lid is a bit stiff' },
    },
  },
  {
    id: 'test-hard-iframe-form',
    tier: 'hard',
    site: 'th-support',
    prompt: 'My order A-5521 arrived with the teapot handle broken. Please report it to support.',
    verdict: (o) => posted(o, 'submitted.html', { order: (v) => compact(v) === 'a-5521', topic: 'damaged', details: (v) => /handle|broken/.test(norm(v)) }),
    scripted: {
      right: [type('Order number', 'A-5521'), choose('What went wrong?', 'An item arrived damaged'), type('Details', 'The teapot handle arrived broken.'), click('Send to support'), done('Reported')],
      wrong: [type('Order number', 'A-5521'), choose('What went wrong?', 'I received the wrong item'), type('Details', 'The teapot handle arrived broken.'), click('Send to support'), done('Reported')],
    },
  },
  {
    id: 'test-hard-popup-tracking',
    tier: 'hard',
    site: 'th-tracking',
    prompt: 'Where is the parcel of my order 88213 at the moment?',
    verdict: (o) => all(visitedWith(o, 'track.html', { parcel: 'JX4471' }), answerNames(o, /dresden/, [/berlin/, /halle/])),
    scripted: {
      right: [click('Track parcel'), { tool: 'switch_tab', args: { index: 1 } }, done('{{find:Latest status\\s+([^\\n(]+)}}')],
      wrong: { answer: 'It was delivered in Berlin.' },
    },
  },
  {
    id: 'test-hard-modal-form',
    tier: 'hard',
    site: 'th-account',
    prompt: 'Change the e-mail address of my account to lin.chen@example.net.',
    verdict: (o) => {
      const saved = reports(o, 'contact').at(-1);
      if (!saved) return fail('the contact details were never saved');
      return norm(saved.email) === 'lin.chen@example.net' ? pass('the account e-mail is lin.chen@example.net') : fail(`the e-mail saved was ${JSON.stringify(saved.email)}`);
    },
    scripted: {
      right: [click('Edit contact details'), type('E-mail address', 'lin.chen@example.net'), type('Repeat the e-mail address', 'lin.chen@example.net'), click('Save changes'), done('Changed')],
      wrong: [click('Edit contact details'), type('Repeat the e-mail address', 'lin.chen@example.net'), click('Save changes'), click('Cancel'), done('Changed')],
    },
  },
];

export const TEST_TASKS: TaskSpec[] = [...EASY, ...MEDIUM, ...HARD];
