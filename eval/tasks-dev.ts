import { GYM_LOGIN, LENDING_LOGIN } from './site-server';
import { choose, click, done, scrollDown, type, wait } from './steps';
import type { TaskSpec } from './tasks';
import { all, answerNames, digits, fail, norm, pass, posted, reports, type Outcome, type Verdict, visitedWith } from './verdicts';

/**
 * The dev split: tasks on sites of their own (eval/sites/d-*), of the kinds a new user tries
 * first (read a price, follow a link and read, a short form, an option, a checkbox, read after a
 * click, sign in and read, search then open the cheapest, a longer form, a list's later page)
 * and two widgets (a week-strip date picker, an autocomplete). The agent may be tuned on these;
 * the tuning split then stays a check and the test split a report.
 */

/** The answer's digits hold `want`. */
function answerDigits(o: Outcome, want: string): Verdict {
  if (o.answer === null) return fail(`no answer (task ${o.status}${o.code ? ` ${o.code}` : ''})`);
  return digits(o.answer).includes(want) ? pass(`the answer gives ${want}`) : fail(`the answer "${o.answer}" does not give ${want}`);
}

const EASY: TaskSpec[] = [
  {
    id: 'dev-easy-price',
    tier: 'easy',
    site: 'd-bakery',
    prompt: 'How much is a large sourdough at Crumb & Co?',
    verdict: (o) => answerNames(o, /5[.,]40?\b/, [/3[.,]20?\b/, /4[.,]90?\b/, /5[.,]80?\b/]),
    scripted: { right: [done('{{find:Sourdough[\\s|]+€[\\d.]+[\\s|]+(€[\\d.]+)}}')], wrong: { answer: '€3.20' } },
  },
  {
    id: 'dev-easy-link-read',
    tier: 'easy',
    site: 'd-library',
    prompt: 'What time does the Riverside library open on Sundays?',
    verdict: (o) => answerNames(o, /\b13[:.]00\b|\b1 ?(pm|p\.m)/, [/\b11[:.]00\b/, /\b10[:.]00\b/]),
    scripted: { right: [click('Riverside Library'), done('{{find:Sunday[\\s|]+(\\d+:\\d\\d–\\d+:\\d\\d)}}')], wrong: [click('Central Library'), done('{{find:Sunday[\\s|]+(\\d+:\\d\\d–\\d+:\\d\\d)}}')] },
  },
  {
    id: 'dev-easy-callback',
    tier: 'easy',
    site: 'd-callback',
    prompt: "Ask Greenleaf Energy to ring me back. I'm Tom Baker and my number is 07700 900123.",
    verdict: (o) => posted(o, 'requested.html', { name: 'Tom Baker', phone: (v) => digits(v).endsWith('7700900123') }),
    scripted: {
      right: [type('Your name', 'Tom Baker'), type('Phone number', '07700 900123'), click('Request a call'), done('Call requested')],
      wrong: [type('Your name', 'Tom Baker 07700 900123'), click('Request a call'), done('Call requested')],
    },
  },
  {
    id: 'dev-easy-option',
    tier: 'easy',
    site: 'd-shopprefs',
    prompt: 'I would like to see the prices in Swiss francs.',
    verdict: (o) => posted(o, 'saved.html', { currency: 'CHF', country: 'AT', language: 'en' }),
    scripted: {
      right: [choose('Show prices in', 'Swiss franc (CHF)'), click('Save settings'), done('Prices are shown in Swiss francs')],
      wrong: [choose('Ship to', 'Switzerland'), click('Save settings'), done('Prices are shown in Swiss francs')],
    },
  },
  {
    id: 'dev-easy-checkbox',
    tier: 'easy',
    site: 'd-privacy',
    prompt: "Turn off personalised ads in my Snapfolio privacy settings. Don't change anything else.",
    verdict: (o) => posted(o, 'privacy-saved.html', { analytics: 'on' }, ['ads', 'faces']),
    scripted: {
      right: [click('Personalised ads'), click('Save preferences'), done('Personalised ads are off')],
      wrong: [click('Personalised ads'), click('Usage statistics'), click('Save preferences'), done('Personalised ads are off')],
    },
  },
  {
    id: 'dev-easy-reveal',
    tier: 'easy',
    site: 'd-classifieds',
    prompt: "What's the phone number of the person selling this bike?",
    verdict: (o) =>
      all(
        reports(o, 'phone').length ? pass('the number was revealed') : fail('the number was never revealed'),
        answerDigits(o, '0648172093'),
      ),
    scripted: { right: [click('Show phone number'), done('{{find:Phone:\\s*(06[\\d ]+)}}')], wrong: { answer: '030 760 1200' } },
  },
  {
    id: 'dev-easy-spec',
    tier: 'easy',
    site: 'd-camera',
    prompt: 'How heavy is the Fennec X2 once the battery is in?',
    verdict: (o) => answerNames(o, /\b468 ?g/, [/\b412\b/, /\b545\b/, /\b390\b/]),
    scripted: { right: [scrollDown(), done('{{find:Weight \\(with battery and card\\)\\W{0,20}(\\d+ g)}}')], wrong: { answer: '412 g' } },
  },
  {
    id: 'dev-easy-spec-tab',
    tier: 'easy',
    site: 'd-headphones',
    prompt: 'How long does the battery of the Orca S5 last on one charge?',
    verdict: (o) => answerNames(o, /\b38\b/, [/\b5 hours/]),
    scripted: { right: [click('Specifications'), done('{{find:Battery life[\\s|]+(Up to \\d+ hours)}}')], wrong: { answer: '5 hours' } },
  },
];

const MEDIUM: TaskSpec[] = [
  {
    id: 'dev-medium-signin-read',
    tier: 'medium',
    site: 'd-gym',
    prompt: `Until when is my Pulse Fitness membership valid? Log in with ${GYM_LOGIN.email}, password ${GYM_LOGIN.password}.`,
    verdict: (o) =>
      all(
        o.records.some((r) => r.path === 'member.html' && r.method === 'POST' && r.fields.email === GYM_LOGIN.email && r.fields.password === GYM_LOGIN.password)
          ? pass('logged in')
          : fail('never logged in with the e-mail and password'),
        answerNames(o, /14 april 2027|2027-04-14|14[./]0?4[./]2027/, [/december/, /2025/]),
      ),
    scripted: {
      right: [click('Member login'), type('E-mail address', GYM_LOGIN.email), type('Password', GYM_LOGIN.password), click('Log in'), done('{{find:Valid until[\\s|]+([^\\n]+)}}')],
      wrong: { answer: '1 December 2026' },
    },
  },
  {
    id: 'dev-medium-cheapest',
    tier: 'medium',
    site: 'd-bookbarn',
    prompt: 'Find the cheapest copy of Dune on Bookbarn and tell me which shop sells it.',
    verdict: (o) => all(visitedWith(o, 'book.html', { id: 'dune-nel' }), answerNames(o, /paperback rider/, [/owl/, /book nook/, /marlowe/, /second chapter/])),
    scripted: {
      right: [type('Title, author or ISBN', 'Dune'), click('Find books'), click('New English Library'), done('{{find:Sold by\\s+([^·\\n]+)}}')],
      wrong: [type('Title, author or ISBN', 'Dune'), click('Find books'), click('Dune Messiah'), done('{{find:Sold by\\s+([^·\\n]+)}}')],
    },
  },
  {
    id: 'dev-medium-five-fields',
    tier: 'medium',
    site: 'd-race',
    prompt: 'Enter me for the Harbour 10K: Ana Silva, born 12 March 1990, ana.silva@example.com, T-shirt size M.',
    verdict: (o) => posted(o, 'entered.html', { first_name: 'Ana', last_name: 'Silva', birth_date: '1990-03-12', email: 'ana.silva@example.com', shirt: 'M' }),
    scripted: {
      right: [
        type('First name', 'Ana'),
        type('Last name', 'Silva'),
        type('Date of birth', '1990-03-12'),
        type('E-mail', 'ana.silva@example.com'),
        choose('T-shirt size', 'M'),
        click('Continue to payment'),
        done('Entered; payment is next'),
      ],
      wrong: [type('First name', 'Ana Silva'), type('Date of birth', '1990-03-12'), type('E-mail', 'ana.silva@example.com'), choose('T-shirt size', 'M'), click('Continue to payment'), done('Entered')],
    },
  },
  {
    id: 'dev-medium-later-page',
    tier: 'medium',
    site: 'd-directory',
    prompt: "Who looks after payroll at Northwind, and what's their extension?",
    verdict: (o) => all(answerNames(o, /jonas berg/, [/ines/, /olga/, /greta/]), answerDigits(o, '2615')),
    scripted: { right: [click('Next »'), done('{{find:(Jonas Berg)}}, extension {{find:Payroll[\\s|]+(\\d+)}}')], wrong: { answer: 'Greta Lind, extension 2501' } },
  },
  {
    id: 'dev-medium-secret-signin',
    tier: 'medium',
    site: 'd-lending',
    prompt: 'When do I have to take The Hobbit back to Eastfield Libraries? My card number and PIN are in your secrets.',
    secrets: { card_number: LENDING_LOGIN.card, pin: LENDING_LOGIN.pin },
    verdict: (o) =>
      all(
        o.records.some((r) => r.path === 'loans.html' && r.method === 'POST' && r.fields.card === LENDING_LOGIN.card && r.fields.pin === LENDING_LOGIN.pin)
          ? pass('signed in')
          : fail('never signed in with the card number and PIN'),
        answerNames(o, /14 december|2026-12-14|14[./]12/, [/30 november/, /19 december/, /5 december/]),
      ),
    scripted: {
      right: [
        click('My account'),
        type('Library card number', '<secret>card_number</secret>'),
        type('PIN', '<secret>pin</secret>'),
        click('Sign in'),
        done('{{find:The Hobbit \\(illustrated edition\\)[\\s|]+\\d+ \\w+ \\d+[\\s|]+(\\d+ \\w+ \\d+)}}'),
      ],
      wrong: { answer: '19 December 2026' },
    },
  },
  {
    id: 'dev-medium-stay-checkin',
    tier: 'medium',
    site: 'd-stays',
    prompt: 'Find the cheapest place to stay in Ghent on Staybird. From what time can I check in there?',
    verdict: (o) => all(visitedWith(o, 'stay.html', { id: 'ghent-patershol' }), answerNames(o, /16[:.h]30|4[:.]30 ?pm/, [/15[:.]00/, /14[:.]00/, /13[:.]00/, /17[:.]00/])),
    scripted: {
      right: [type('Where are you going?', 'Ghent'), click('Search stays'), click('Patershol Rooms'), done('{{find:Check-in[\\s|]+from (\\d+:\\d+)}}')],
      wrong: [type('Where are you going?', 'Ghent'), click('Search stays'), click('Vrijdagmarkt Loft'), done('{{find:Check-in[\\s|]+from (\\d+:\\d+)}}')],
    },
  },
  {
    id: 'dev-medium-paged-events',
    tier: 'medium',
    site: 'd-events',
    prompt: 'When is Nina Okoro playing a jazz night at the Corn Exchange?',
    verdict: (o) => answerNames(o, /8 january|january 8(th)?\b|08[./]01/, [/12 december/, /5 december/]),
    scripted: { right: [click('Next ›'), click('Next ›'), done('{{find:(Fri 8 January) – Jazz night: Nina Okoro}}')], wrong: { answer: 'Sat 12 December at 11:00' } },
  },
  {
    id: 'dev-medium-second-page',
    tier: 'medium',
    site: 'd-events',
    prompt: "What is the last event on the second page of the Corn Exchange's list? Tell me its name and date.",
    verdict: (o) => answerNames(o, /carols/, [/jazz brunch|12 december/, /trams|14 january/, /marsh quartet/]),
    scripted: { right: [click('2'), done('{{find:(Sun 20 December – Carols by candlelight)}}')], wrong: { answer: 'Jazz brunch with Nina Okoro, Sat 12 December' } },
  },
  {
    id: 'dev-medium-size-colour',
    tier: 'medium',
    site: 'd-jacket',
    prompt: 'Put the Harbor rain jacket in navy, size L, in my bag.',
    verdict: (o) => posted(o, 'bag.html', { colour: 'navy', size: 'L' }),
    scripted: { right: [click('Navy'), click('L'), click('Add to bag'), done('The navy Harbor rain jacket in size L is in your bag.')], wrong: [click('Navy'), click('XL'), click('Add to bag'), done('The navy Harbor rain jacket in size L is in your bag.')] },
  },
];

const HARD: TaskSpec[] = [
  {
    id: 'dev-hard-week-strip',
    tier: 'hard',
    site: 'd-table',
    prompt: 'Book a table at Olive for 4 people on Friday 18 December at 19:30, in the name of Okafor.',
    verdict: (o) => posted(o, 'booked.html', { guests: '4', date: '2026-12-18', time: '19:30', name: 'Okafor' }),
    scripted: {
      right: [choose('Guests', '4'), click('Later dates'), click('Later dates'), click('Friday 18 December 2026'), click('19:30'), type('Name for the booking', 'Okafor'), click('Book table'), done('Booked')],
      wrong: [choose('Guests', '4'), click('Later dates'), click('Friday 11 December 2026'), click('19:30'), type('Name for the booking', 'Okafor'), click('Book table'), done('Booked for 18 December')],
    },
  },
  {
    id: 'dev-hard-autocomplete',
    tier: 'hard',
    site: 'd-weather',
    prompt: 'Make Zaragoza in Spain my home city on Skycast.',
    verdict: (o) => posted(o, 'saved.html', { city_id: 'zaragoza-es' }),
    scripted: {
      right: [type('Home city', 'Zarag'), click('Zaragoza, Aragon, Spain'), click('Save settings'), done('Saved')],
      wrong: [type('Home city', 'Zarag'), click('Zaragoza, Puebla, Mexico'), click('Save settings'), done('Saved')],
    },
  },
  {
    id: 'dev-hard-two-stations',
    tier: 'hard',
    site: 'd-rail',
    prompt: "Show me tomorrow morning's trains from Leeds to York on Railhop.",
    verdict: (o) => posted(o, 'times.html', { from: 'LDS', to: 'YRK', when: 'morning' }),
    scripted: {
      right: [type('From', 'Leeds'), click('Leeds (LDS)'), type('To', 'York'), click('York (YRK)'), choose('Leaving', 'Tomorrow morning'), click('Find trains'), done('{{find:(09:12[^\\n]*)}}')],
      wrong: [type('From', 'Leeds'), click('Leeds Bradford Airport (bus link) (LBA)'), type('To', 'York'), click('York (YRK)'), choose('Leaving', 'Tomorrow morning'), click('Find trains'), done('09:12')],
    },
  },
  {
    id: 'dev-hard-calendar',
    tier: 'hard',
    site: 'd-ferry',
    prompt: 'Book the ferry from Burtonport to Arranmore for two adults on Tuesday 9 March 2027. We are on foot, no car.',
    verdict: (o) => posted(o, 'booked.html', { route: 'bur-arr', date: '2027-03-09', adults: '2', vehicle: 'none' }),
    scripted: {
      right: [click('Choose a date'), click('Next month'), click('Next month'), click('Next month'), click('Tuesday 9 March 2027'), choose('Adults', '2'), click('Continue'), done('Booked')],
      wrong: [click('Choose a date'), click('Next month'), click('Next month'), click('Tuesday 9 February 2027'), choose('Adults', '2'), click('Continue'), done('Booked for 9 March')],
    },
  },
  {
    id: 'dev-hard-scrolled-reviews',
    tier: 'hard',
    site: 'd-skillet',
    prompt: 'A reviewer called Helga K. was unhappy with the Ironclad skillet. What was her complaint?',
    verdict: (o) => answerNames(o, /handle/, [/chipped/, /crack/, /rust/, /seasoning/]),
    scripted: { right: [...[1, 2, 3, 4].flatMap(() => [scrollDown(), wait(1)]), done('{{find:([^\\n]*)\\n[^\\n]*by Helga K\\.}}')], wrong: { answer: 'Arrived with a chipped rim' } },
  },
  {
    id: 'dev-hard-frame-form',
    tier: 'hard',
    site: 'd-parcel',
    prompt: 'My Parcelly parcel PY 4410 2291 came with the box crushed and the vase inside broken. Let their support know; my e-mail is jo.reid@example.com.',
    verdict: (o) =>
      posted(o, 'sent.html', {
        topic: 'damaged',
        tracking: (v) => digits(v) === '44102291',
        email: 'jo.reid@example.com',
        message: (v) => /broke|crush|damage/.test(norm(v)),
      }),
    scripted: {
      right: [
        choose('What is it about?', 'My parcel arrived damaged'),
        type('Tracking number', 'PY 4410 2291'),
        type('Your message', 'The box was crushed and the vase inside is broken.'),
        type('Your e-mail', 'jo.reid@example.com'),
        click('Send message'),
        done('Sent'),
      ],
      wrong: [
        choose('What is it about?', 'Something else'),
        type('Tracking number', 'PY 4410 2291'),
        type('Your message', 'The box was crushed and the vase inside is broken.'),
        type('Your e-mail', 'jo.reid@example.com'),
        click('Send message'),
        done('Sent'),
      ],
    },
  },
  {
    id: 'dev-hard-modal-address',
    tier: 'hard',
    site: 'd-grocer',
    prompt: 'Change my Freshbox delivery address to 12 Quay Street, Cork T12 X4P2.',
    verdict: (o) =>
      posted(o, 'saved.html', {
        street: (v) => /^12 quay st(reet)?$/.test(norm(v)),
        town: 'cork',
        eircode: (v) => norm(v).replace(/\s/g, '') === 't12x4p2',
      }),
    scripted: {
      right: [click('Edit delivery address'), type('Street and number', '12 Quay Street'), type('Town or city', 'Cork'), type('Eircode', 'T12 X4P2'), click('Save address'), done('Your delivery address is now 12 Quay Street, Cork T12 X4P2.')],
      wrong: [click('Edit delivery address'), type('Street and number', '12 Quay Street'), click('Save address'), done('Your delivery address is now 12 Quay Street, Cork T12 X4P2.')],
    },
  },
];

export const DEV_TASKS: TaskSpec[] = [...EASY, ...MEDIUM, ...HARD];
