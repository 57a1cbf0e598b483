/**
 * Surer finishes, through the agent runner on a real page: what each action changed, presses
 * counted, a done held once against the page, a wrong tool answered with the right one.
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { runnerOn as runnerOnTab, runSteps, scriptedLlm, toolAnswers, type Call } from '../../test/support/agent-runner';
import type { LlmMessage } from './llm/types';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run'];

const PAGES: Record<string, string> = {
  '/form': `<!doctype html><title>Sign up</title><form action="/sent"><label>Name <input name="name"></label> <label>Email <input name="email"></label> <button>Send</button></form>`,
  '/checked': `<!doctype html><title>Sign up</title><form onsubmit="event.preventDefault(); document.getElementById('e').textContent = 'Email is required'">
    <label>Name <input name="name"></label> <label>Email <input name="email"></label> <span class="error" id="e"></span> <button>Send</button></form>`,
  '/shop': `<!doctype html><title>Shop</title><p id="c">Cart (0)</p><button onclick="const c = document.getElementById('c'); c.textContent = 'Cart (' + (Number(c.textContent.match(/\\d+/)[0]) + 1) + ')'">Add to cart</button>`,
  '/photos': `<!doctype html><title>Photos</title><p id="c">Photo 1 of 9</p><button onclick="const c = document.getElementById('c'); c.textContent = 'Photo ' + (Number(c.textContent.match(/\\d+/)[0]) + 1) + ' of 9'">Next photo</button>`,
  '/contact': `<!doctype html><title>Contact</title><p>Call us at 555-0142</p><a href="/contact">Try again</a>`,
  '/plan': `<!doctype html><title>Plan</title><form action="/sent"><label><input type="radio" name="plan" value="basic" checked> Basic</label> <label><input type="radio" name="plan" value="standard"> Standard</label> <button>Submit</button></form>`,
  '/plans': `<!doctype html><title>Choose a plan</title><form action="/sent"><label><input type="radio" name="plan" value="basic" checked> Basic</label> <label><input type="radio" name="plan" value="standard"> Standard</label> <label><input type="radio" name="plan" value="premium"> Premium</label> <button>Submit</button></form>`,
  '/sent': `<!doctype html><title>Thanks</title><p>Thanks</p>`,
  '/bike-ad': `<!doctype html><meta charset="utf-8"><title>Gravel bike</title><a href="/bike-ad">Swapsy</a><h1>Gravel bike</h1><p id="p">Phone: 06 •• •• •• ••</p><button onclick="p.textContent = 'Phone: 06 4817 2093'; this.remove()">Show phone number</button><a href="/contact">Send a message</a><p>Help desk: 030 760 1200</p>`,
  '/colour-size': `<!doctype html><title>Rain jacket</title><form action="/sent"><label><input type="radio" name="colour" value="olive" checked> Olive</label> <label><input type="radio" name="colour" value="navy"> Navy</label>
    <input type="hidden" name="size" id="size"> ${['S', 'M', 'L'].map((s) => `<button type="button" aria-pressed="false" onclick="size.value = '${s}'; for (const b of document.querySelectorAll('[aria-pressed]')) b.setAttribute('aria-pressed', String(b === this))">${s}</button>`).join(' ')} <button>Add to bag</button></form>`,
  '/terms': `<!doctype html><title>Create your account</title><form action="/terms-refused"><label><input type="checkbox" name="offers"> Send me special offers</label> <label><input type="checkbox" name="terms"> I accept the terms of service</label> <button>Continue</button></form>`,
  '/terms-refused': `<!doctype html><title>Welcome</title><h1>Welcome</h1><p>You must accept the terms of service.</p>`,
  '/signin': `<!doctype html><title>Sign in</title><form action="/sent"><label>Username <input name="user"></label> <label>Password <input type="password" name="pw"></label> <button>Sign in</button></form>`,
  '/callback': `<!doctype html><title>Solar panels</title><form action="/sent"><label>Phone number <input type="tel" name="phone"></label> <button>Call me back</button></form>`,
  '/contact-form': `<!doctype html><title>Contact</title><form action="/sent"><label>Name <input name="name" required></label> <label>Email <input type="email" name="email" required></label> <label>Message <textarea name="message" required></textarea></label> <button>Send</button></form>`,
  '/invoices': `<!doctype html><meta charset="utf-8"><title>Invoices</title><p>Invoice #1001: €337.13</p><p>Invoice #1002: €374.26</p><p>Invoice #1003: €411.39</p><a href="/invoices">Reload</a>`,
  '/city': `<!doctype html><title>Your profile</title><form action="/sent"><label>City <input name="city" value="Paris"></label> <button>Save profile</button></form>`,
  '/shop-settings': `<!doctype html><title>Settings</title><form action="/sent"><label>Language <select name="lang"><option>English</option><option>Deutsch</option></select></label> <label>Show prices in <select name="cur"><option>Euro (EUR)</option><option>Swiss franc (CHF)</option></select></label> <button>Save settings</button></form>`,
  '/address': `<!doctype html><title>Your account</title><form action="/sent"><label>Street and number <input name="street" value="4 Mill Lane"></label> <label>Town or city <input name="town" value="Cork"></label> <label>Eircode <input name="code" value="T23 K8C1"></label> <button>Save address</button></form>`,
  '/ticket': `<!doctype html><title>Ticket</title><span id="l">Priority</span> <button id="prio" aria-haspopup="listbox" aria-labelledby="l prio" onclick="document.getElementById('o').hidden = !document.getElementById('o').hidden">Normal</button>
    <ul id="o" role="listbox" hidden><li role="option" onclick="prio.textContent = this.textContent; o.hidden = true">Low</li><li role="option" onclick="prio.textContent = this.textContent; o.hidden = true">Normal</li><li role="option" onclick="prio.textContent = this.textContent; o.hidden = true">High</li></ul>
    <button onclick="document.getElementById('out').textContent = 'Saved with ' + prio.textContent">Save ticket</button> <p id="out"></p>`,
  '/profile': `<!doctype html><title>Profile</title><form action="/sent"><label>City <select name="city"><option>Paris</option><option>Lyon</option><option>Marseille</option></select></label>
    <fieldset><legend>Shipping</legend><label><input type="radio" name="ship" value="standard" checked> Standard shipping (free)</label> <label><input type="radio" name="ship" value="express"> Express shipping ($9)</label></fieldset> <button>Save profile</button></form>`,
  '/apply': `<!doctype html><title>Apply</title><form action="/sent"><label>Your name <input name="name"></label> <label>CV file <input type="file" name="cv"></label> <label>Start <select name="start"><option value="">Choose</option><option value="may">May</option></select></label> <button>Send application</button></form>`,
  '/results': `<!doctype html><title>Results</title><p>Pine Chair: $89</p><a href="/home">Home</a> <a href="/results2">Next page</a>`,
  '/results2': `<!doctype html><title>Results 2</title><p>Oak Rocking Chair: $149</p><a href="/home">Home</a> <a href="/results">Previous page</a>`,
  '/privacy': `<!doctype html><title>Privacy</title><form action="/sent"><label><input type="checkbox" name="ads" checked> Personalised ads</label> <label><input type="checkbox" name="faces"> Face grouping</label> <button>Save preferences</button></form>`,
  '/books': `<!doctype html><title>Bookbarn</title><form action="/results"><label>Title, author or ISBN <input type="search" name="q"></label> <button>Find books</button></form>`,
  '/member-login': `<!doctype html><title>Member login</title><form action="/sent"><label>E-mail <input name="email"></label> <button>Log in</button></form><a href="/plan">Not a member yet? Join</a>`,
  '/member-password': `<!doctype html><title>Member login</title><form action="/sent"><label>E-mail <input name="email" type="email"></label> <label>Password <input name="password" type="password"></label> <button>Log in</button></form><a href="/plan">Not a member yet? Join</a>`,
  '/race-entry': `<!doctype html><title>Entry</title><form action="/sent"><label>Name <input name="name" required></label> <label>Running club (optional) <input name="club"></label> <label>Team <input name="team"></label> <button>Send</button></form>`,
  '/bakery-places': `<!doctype html><meta charset="utf-8"><title>Bakery</title><a href="#top">Home</a> <a href="#breads">Breads</a> <a href="/contact">Visit us</a><h2 id="breads">Breads</h2><p>Sourdough €3.20 €5.40</p>`,
  '/wizard': `<!doctype html><title>Checkout: step 1 of 2</title><form action="/wizard2"><label>Name for the delivery <input name="name"></label> <button>Next</button></form>`,
  '/wizard2': `<!doctype html><title>Checkout: step 2 of 2</title><form action="/sent"><label><input type="radio" name="ship" value="standard" checked> Standard (5 days)</label> <label><input type="radio" name="ship" value="express"> Express (1 day)</label> <button>Place order</button></form>`,
  '/staff': `<!doctype html><title>Staff</title><a href="/results">Intranet</a><table><tr><td>Ines Duarte</td><td>Finance</td><td>2604</td></tr><tr><td>Jonas Berg</td><td>Payroll</td><td>2615</td></tr></table>`,
  '/team': `<!doctype html><title>Team directory</title><h1>Team directory</h1><table><tr><th>Name</th><th>Role</th><th>City</th></tr><tr><td>Ada Lovelace</td><td>Engineer</td><td>London</td></tr><tr><td>Alan Turing</td><td>Researcher</td><td>Manchester</td></tr></table>`,
  '/garden-store': `<!doctype html><title>Garden Store</title><h1>Garden Store</h1><p>Orders ship within 2 days.</p><a href="/garden-shipping">Shipping policy</a>`,
  '/garden-shipping': `<!doctype html><title>Shipping policy</title><h1>Shipping policy</h1><p>Returns are accepted within 30 days.</p>`,
  '/bakery': `<!doctype html><meta charset="utf-8"><title>Bakery</title><a href="#breads">Breads</a> <a href="#/cakes">Cakes</a><h2 id="breads">Breads</h2><p>Sourdough €3.20 €5.40</p>`,
  '/mugs': `<!doctype html><title>Mugs</title><p id="c">In your cart: nothing</p><button onclick="add('White Mug')">Add White Mug to cart</button> <button onclick="add('Green Mug')">Add Green Mug to cart</button>
    <script>const items = []; function add(n) { items.push(n); document.getElementById('c').textContent = 'In your cart: ' + items.join(', '); }</script>`,
  '/tall-spec': `<!doctype html><title>Fennec X2</title><h1>Fennec X2</h1><p>A small camera for big trips.</p><div style="height:2400px">${Array.from({ length: 40 }, (_, i) => `<p>Made for travel, part ${i + 1} of the story.</p>`).join('')}</div><table><tr><td>Weight (body only)</td><td>412 g</td></tr><tr><td>Weight (with battery)</td><td>468 g</td></tr><tr><td>Sensor</td><td>24 MP</td></tr></table>`,
  '/tabs': `<!doctype html><title>Orca S5</title><h1>Orca S5 headphones</h1><div role="tablist"><button role="tab" aria-selected="true" data-p="a">Overview</button><button role="tab" aria-selected="false" data-p="b">Specifications</button><button role="tab" aria-selected="false" data-p="c">Reviews</button></div>
    <p id="a">Ten minutes of charging give 5 hours of play.</p><p id="b" hidden>Battery life: 38 hours</p><p id="c" hidden>Lasts all week.</p>
    <script>for (const t of document.querySelectorAll('[role=tab]')) t.onclick = () => { for (const o of document.querySelectorAll('[role=tab]')) { o.setAttribute('aria-selected', String(o === t)); document.getElementById(o.dataset.p).hidden = o !== t; } };</script>`,
  '/jacket': `<!doctype html><title>Rain jacket</title><label>Size <select id="s"><option value="">Choose</option><option>M</option><option>L</option></select></label> <button onclick="add()">Add to bag</button><p id="c"></p>
    <script>function add() { const s = document.getElementById('s').value; document.getElementById('c').textContent = s ? 'Added to bag: size ' + s : 'Choose a size first.'; }</script>`,
  '/booking': `<!doctype html><title>Book a table</title><form action="/sent"><label>Guests <select name="guests"><option>2</option><option>4</option></select></label>
    <button type="button" aria-label="Later dates" onclick="document.getElementById('r').textContent = '9 – 15 December'">›</button> <span id="r">2 – 8 December</span>
    <button type="button" aria-pressed="false" onclick="this.setAttribute('aria-pressed', 'true')">19:30</button> <button>Book table</button></form>`,
  '/settings': `<!doctype html><title>Privacy settings</title><form action="/settings-saved"><label><input type="checkbox" name="ads" checked> Personalised ads</label> <label><input type="checkbox" name="faces"> Face grouping</label> <button>Save preferences</button></form>`,
  '/settings-saved': `<!doctype html><title>Preferences saved</title><p>Your preferences were saved.</p><a href="/settings">Back to privacy settings</a>`,
  '/home-city': `<!doctype html><title>Settings</title><form action="/sent"><label>Home city <select name="city"><option>Choose</option><option>Zaragoza, Puebla, Mexico</option><option>Zaragoza, Aragon, Spain</option></select></label> <button>Save settings</button></form>`,
  '/dune-results': `<!doctype html><meta charset="utf-8"><title>Results</title><p><a href="/dune-folio">Dune – Folio Society</a> · €58.00</p><p><a href="/dune-nel">Dune – New English Library</a> · €4.75</p>`,
  '/dune-nel': `<!doctype html><meta charset="utf-8"><title>Book</title><h1>Dune</h1><p>New English Library, paperback · €4.75</p><p>Sold by</p><p>Paperback Rider, Hull</p><a href="/dune-results">Back to results</a>`,
  '/strip': `<!doctype html><title>Book a table</title><button id="later">Later dates</button> <span id="days"></span>
    <script>let first = 2; const draw = () => { days.innerHTML = ''; for (let d = first; d < first + 3; d++) { const b = document.createElement('button'); b.textContent = d + ' December 2026'; days.append(b); } }; later.onclick = () => { first += 3; draw(); }; draw();</script>`,
  '/login-refused': `<!doctype html><title>Member login</title><form action="/login-refused"><label>E-mail <input name="email" type="email"></label> <label>Password <input name="password" type="password"></label> <button>Log in</button></form>`,
  '/city-pick': `<!doctype html><title>Settings</title><form action="/sent"><label>City <input name="city" id="c"></label> <button type="button" onclick="c.value = 'Lyon, France'">Lyon, France</button> <button>Save</button></form>`,
  '/garden': `<!doctype html><title>Garden category</title><a href="/home">All categories</a><p>Garden Hose: $19</p><p>Rake: $15</p><p>Trowel: $7</p><p>Watering Can: $12</p>`,
  '/stays': `<!doctype html><meta charset="utf-8"><title>Stays</title><p>Graslei House</p><p>€89 a night · <a href="/sent?stay=graslei">See availability</a></p><p>Patershol Rooms</p><p>€71 a night · <a href="/sent?stay=patershol">See availability</a></p><p>Vrijdagmarkt Loft</p><p>€104 a night · <a href="/sent?stay=loft">See availability</a></p>`,
  '/ring-back-home': `<!doctype html><title>Contact us</title><a href="/results">Catalogue</a><form action="/sent"><label>Your name <input name="name"></label> <label>Phone number <input type="tel" name="phone"></label> <button>Request a call</button></form>`,
  '/plan-prices': `<!doctype html><title>Price list</title><h1>Price list</h1><p>Silver plan: $19 per month</p><p>Gold plan: $42 per month</p>`,
  '/slots': `<!doctype html><title>Book a table</title><p id="picked">none</p><button aria-pressed="false" onclick="picked.textContent = this.textContent">17:30</button> <button aria-pressed="false" onclick="picked.textContent = this.textContent">19:30</button>`,
  '/ledger': `<!doctype html><meta charset="utf-8"><title>Ledger</title><h1>Ledger</h1>${Array.from({ length: 60 }, (_, i) => `<p>Invoice #${1001 + i}: €${(100 + i * 7.25).toFixed(2)}</p>`).join('')}`,
  '/ring-back': `<!doctype html><title>Contact us</title><form action="/sent"><label>Your name <input name="name"></label> <label>Phone number <input type="tel" name="phone"></label> <button>Request a call</button></form>
    <form action="/help"><label>Search help articles <input type="search" name="q"></label> <button>Search</button></form>`,
  '/table': `<!doctype html><title>Book a table</title><form action="/sent"><label>Date <input type="date" name="date"></label> <label>Guests <select name="guests"><option>1</option><option selected>2</option><option>3</option><option>4</option></select></label> <button>Book table</button></form>`,
  '/topic': `<!doctype html><title>Contact</title><form action="/sent"><label>What is it about? <select name="topic"><option value="">Choose a topic</option><option>My parcel is late</option><option>My parcel arrived damaged</option></select></label> <button>Send message</button></form>`,
  '/gigs': `<!doctype html><meta charset="utf-8"><title>What's on</title><h2 id="e">Sat 12 December – Jazz brunch with Nina Okoro</h2><button onclick="document.getElementById('e').textContent = 'Fri 8 January – Jazz night: Nina Okoro Trio'">Next page</button>`,
  '/months': `<!doctype html><title>Choose a date</title><p id="m">December 2026</p><button onclick="document.getElementById('m').textContent = 'January 2027'">Next month</button><p style="height: 2000px">Days</p>`,
  '/hours': `<!doctype html><meta charset="utf-8"><title>Riverside Library</title><h1>Riverside Library</h1><table><tr><td>Saturday</td><td>10:00–17:00</td></tr><tr><td>Sunday</td><td>13:00–17:00</td></tr></table><a href="/results">Join the library</a>`,
  '/gig-pages': `<!doctype html><title>Gigs</title><ul id="l"></ul><nav aria-label="Pages"><button data-p="1">1</button> <button data-p="2">2</button> <button data-p="3">3</button></nav>
    <script>const g = [['Ama Lee', 'Nils Berg'], ['Rosa Diaz', 'Tom Kay'], ['Ivo Ruiz', 'Lu Chen']]; const show = (p) => { l.innerHTML = g[p - 1].map((n) => '<li>' + n + '</li>').join(''); for (const b of document.querySelectorAll('[data-p]')) b.toggleAttribute('aria-current', Number(b.dataset.p) === p); };
    for (const b of document.querySelectorAll('[data-p]')) b.onclick = () => show(Number(b.dataset.p)); show(1);</script>`,
};

let browser: Browser;
let context: BrowserContext;
let page: Page;
const tab = {
  get page() {
    return page;
  },
  set page(p: Page) {
    page = p;
  },
  get context() {
    return context;
  },
};

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
});
afterAll(() => browser?.close());
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1024, height: 600 } });
  await context.route('http://site.test/**', (route) => route.fulfill({ contentType: 'text/html', body: PAGES[new URL(route.request().url()).pathname] ?? 'not found' }));
  page = await context.newPage();
});
afterEach(() => context.close());

const run = (answers: Call[][], max = 8, opts: { followsSchemas?: boolean; prompt?: string; output?: NonNullable<Parameters<typeof runSteps>[2]>['output'] } = {}) => {
  const { llm, requests, tools, brief } = scriptedLlm(answers, opts);
  const { runner, recorded } = runnerOnTab(tab, llm);
  return runSteps(runner, max, { prompt: opts.prompt, output: opts.output }).then((results) => ({ results, requests, recorded, tools, brief }));
};
const lastObservation = (messages: LlmMessage[]) => [...messages].reverse().find((m) => m.role === 'user' && m.content.startsWith('Observation'))!.content;
/** The observation's lines before the task said again (its last line). */
const closingLines = (messages: LlmMessage[]) => {
  const lines = lastObservation(messages).split('\n');
  expect(lines.at(-1)).toMatch(/^Your task: /);
  return lines.slice(0, -1);
};
const done: Call = { tool: 'done', args: { message: 'Done' } };

describe('when the model writes a thought first', () => {
  it('at a new task, and after a press that changed nothing or an action not performed; not after actions that went as asked', async () => {
    await page.goto('http://site.test/photos');
    const next: Call = { tool: 'click_element', args: { index: 1 } };
    const scroll: Call = { tool: 'scroll', args: { direction: 'down' } };
    // the first look, a press that changed the page, a scroll that changed nothing, an element the page does not hold
    const { brief, requests } = await run([[next], [scroll], [{ tool: 'click_element', args: { index: 9 } }], [{ ...done, args: { message: 'no', success: false } }]], 8, { prompt: 'Show the next photo', followsSchemas: true });
    expect(closingLines(requests[1]).at(-1)).toBe('Changed: text appeared: "Photo 2 of 9"; text went away: "Photo 1 of 9"');
    expect(closingLines(requests[2]).at(-1)).toBe('Changed: nothing visible changed');
    const answered = (messages: LlmMessage[]) => messages.filter((m) => m.role === 'tool').at(-1)!.content;
    expect(answered(requests[3])).toMatch(/^(Invalid call|Action failed)/);
    expect(answered(requests[4])).toMatch(/^Not ended yet/);
    // the new task, the press that went as asked, the scroll that changed nothing, the element not there, the give-up held
    expect(brief).toEqual([false, true, false, false, false]);
  });
});

describe('what an action changed', () => {
  it('opens the next observation: the value a field now holds, or that nothing visible changed', async () => {
    await page.goto('http://site.test/form');
    const { requests } = await run([[{ tool: 'input_text', args: { index: 1, text: 'Ada' } }], [{ tool: 'scroll', args: { direction: 'down' } }], [{ ...done, args: { message: 'no', success: false } }]]);
    expect(closingLines(requests[1]).at(-1)).toBe('Changed: [1] now holds "Ada"');
    expect(closingLines(requests[2]).at(-1)).toBe('Changed: nothing visible changed');
  });

  it('does not name a link pressed again that changed nothing (a jump to a part of the page already shown)', async () => {
    await page.goto('http://site.test/bakery');
    const press: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[press], [press], [press], [done]]);
    // (a model that does not follow the schemas: not held)
    expect(closingLines(requests[1]).at(-1)).toBe("Changed: only the URL's #part is now #breads (a place on this same page); nothing visible changed");
    expect(closingLines(requests[2]).at(-1)).toBe('Changed: nothing visible changed');
    for (const request of requests.slice(1)) expect(lastObservation(request)).not.toContain('you pressed');
  });

  it('holds once a link to a part of a page shown whole (a model that follows the schemas), and presses it when pressed again', async () => {
    await page.goto('http://site.test/bakery');
    const press: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[press], [press], [done]], 8, { prompt: 'How much is a large sourdough?', followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed: it only jumps to #breads of this page, and the observation already shows the whole page: all its text is above. To press [1] anyway, press it again; if the page\'s text answers the task, call done with it.',
    );
    expect(toolAnswers(requests[2]).at(-1)).toContain('Clicked [1] link "Breads"');
    // a #route of a page that draws itself by it is not held
    const route: Call = { tool: 'click_element', args: { index: 2 } };
    const routed = await run([[route], [done]], 8, { prompt: 'How much is a slice of carrot cake?', followsSchemas: true });
    expect(toolAnswers(routed.requests[1]).at(-1)).toContain('Clicked [2] link "Cakes"');
  });

  it('names the same button pressed again and again while the page changes, with what the page shows', async () => {
    await page.goto('http://site.test/shop');
    const press: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[press], [press], [press], [done]]);
    expect(lastObservation(requests[1])).not.toContain('you pressed');
    expect(lastObservation(requests[2])).toContain('Note: you pressed "Add to cart" 2 times in a row and the page changed each time; the page shows "Cart (2)".');
    expect(lastObservation(requests[3])).toContain('Note: you pressed "Add to cart" 3 times in a row and the page changed each time; the page shows "Cart (3)".');
  });

  it('leaves out every link that only jumped to a place of a page whose text stayed the same, while it looks the same', async () => {
    await page.goto('http://site.test/bakery-places');
    const home: Call = { tool: 'click_element', args: { index: 1 } };
    const breads: Call = { tool: 'click_element', args: { index: 2 } };
    const { requests, tools } = await run([[home], [breads], [breads], [done]], 8, { prompt: 'When does the bakery open on Sundays?', followsSchemas: true });
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(closingLines(requests[1]).at(-1)).toBe("Changed: only the URL's #part is now #top (a place on this same page); nothing visible changed");
    expect(pressable(1)).toEqual([2, 3]);
    // "Breads" held once (it only jumps on a page shown whole), then pressed
    expect(toolAnswers(requests[2]).at(-1)).toContain('Not pressed: it only jumps to #breads');
    expect(pressable(2)).not.toContain(1);
    // "Home" stays left out after "Breads" jumped elsewhere on the same page
    expect(closingLines(requests[3]).at(-1)).toBe("Changed: only the URL's #part is now #breads (a place on this same page); nothing visible changed");
    expect(pressable(3)).toEqual([3]);
  });

  it('leaves the button pressed twice in a row out of the next answer of a model that follows the schemas', async () => {
    await page.goto('http://site.test/photos');
    const press: Call = { tool: 'click_element', args: { index: 1 } };
    const { tools } = await run([[press], [press], [{ tool: 'wait', args: { seconds: 1 } }], [done]], 8, { followsSchemas: true });
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(pressable(1)).toEqual([1]);
    expect(pressable(2)).toEqual([]);
    // something else done in between, it may be pressed again
    expect(pressable(3)).toEqual([1]);
    expect(await page.textContent('#c')).toBe('Photo 3 of 9');
  });

  it('holds a second press in a row of a button that adds, once, with what the page shows, for a model that follows the schemas', async () => {
    await page.goto('http://site.test/shop');
    const press: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests, tools, results } = await run([[press], [press], [done]], 8, { followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not pressed again: you pressed [1] "Add to cart" at your last step and the page changed (the page now shows "Cart (1)"). A second press adds a second one. If the task asks for one, that is done: call done. If it asks for more, press it again after your next step.',
    );
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(pressable(2)).toEqual([]);
    expect(results.at(-1)!.kind).toBe('done');
    expect(await page.textContent('#c')).toBe('Cart (1)');
  });

  it('presses a button that adds again when asked after the hold, and holds it no more in a task that asks for several', async () => {
    await page.goto('http://site.test/shop');
    const press: Call = { tool: 'click_element', args: { index: 1 } };
    await run([[press], [press], [{ tool: 'wait', args: { seconds: 1 } }], [press], [press], [done]], 8, { followsSchemas: true, prompt: 'Put three of these in the cart.' });
    expect(await page.textContent('#c')).toBe('Cart (3)');
  });

  it('does not hold a second press for a model that does not follow the schemas', async () => {
    await page.goto('http://site.test/shop');
    const press: Call = { tool: 'click_element', args: { index: 1 } };
    await run([[press], [press], [done]]);
    expect(await page.textContent('#c')).toBe('Cart (2)');
  });
});

describe('a done that claims success', () => {
  it('on the page a press led to that turns down what was sent: the page named with the observation, and the done answered once', async () => {
    await page.goto('http://site.test/terms');
    const { results, requests } = await run([[{ tool: 'click_element', args: { index: 3 } }], [done], [done]], 8, { prompt: 'Accept the terms of service (do not sign up for offers) and press Continue.' });
    expect(lastObservation(requests[1])).toContain('Note: this page answers "You must accept the terms of service.": the site did not take what was sent. Go back to the form (go_back), do what this page asks, then send it again.');
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not accepted yet: this page answers "You must accept the terms of service.": the site did not take what was sent. Go back to the form (go_back), do what the page asks and send it again; if the task is complete as it is, call done again.');
    expect(results.at(-1)?.kind).toBe('done');
  });

  it('is answered once when a filled form was never sent, and accepted when repeated', async () => {
    await page.goto('http://site.test/form');
    const { results, requests } = await run([[{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'input_text', args: { index: 2, text: 'ada@example.com' } }], [done]]);
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'input_text'],
      ['continue', 'input_text'],
      ['continue', 'done'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not accepted yet: you filled [1], [2] but the form was not sent (its button [3] "Send" was not pressed). Press [3] to send it, or if the task is complete as it is, call done again.');
  });

  it('is answered once when a filled form was never sent, a press on one of its fields in between (it sends nothing)', async () => {
    await page.goto('http://site.test/apply');
    const { requests } = await run([[{ tool: 'select_option', args: { index: 3, value: 'May' } }], [{ tool: 'click_element', args: { index: 3 } }], [done], [done]]);
    expect(toolAnswers(requests[3]).at(-1)).toBe('Not accepted yet: you filled [3] but the form was not sent (its button [4] "Send application" was not pressed). Press [4] to send it, or if the task is complete as it is, call done again.');
  });

  it('leaves the form\'s button the one press of the next answer of a model that follows the schemas', async () => {
    await page.goto('http://site.test/member-login');
    const { requests, tools } = await run([[{ tool: 'input_text', args: { index: 1, text: 'ada@example.com' } }], [done], [{ tool: 'click_element', args: { index: 2 } }], [done]], 8, { followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not accepted yet: you filled \[1\] but the form was not sent .*Press \[2\] to send it/);
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')?.parameters as { properties: { index: { enum: unknown[] } } } | undefined)?.properties.index.enum.map(String) ?? [];
    const is = (v: string, i: number) => v === String(i) || v.endsWith(`[${i}]`);
    expect(pressable(1).some((v) => is(v, 3))).toBe(true);
    expect(pressable(2).some((v) => is(v, 2))).toBe(true);
    expect(pressable(2).some((v) => is(v, 3))).toBe(false);
  });

  it('is not offered again at the next answer of a model that follows the schemas, after it was answered', async () => {
    await page.goto('http://site.test/form');
    const fill: Call[] = [{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'input_text', args: { index: 2, text: 'ada@example.com' } }];
    const { results, tools } = await run([fill, [done], [{ tool: 'click_element', args: { index: 3 } }], [done]], 8, { followsSchemas: true });
    const doneParameters = (n: number) => (tools[n] ?? []).find((t) => t.name === 'done')!.parameters as Record<string, unknown>;
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'input_text'],
      ['continue', 'input_text'],
      ['continue', 'done'],
      ['continue', 'click_element'],
      ['done', 'done'],
    ]);
    expect(doneParameters(1).not).toBeUndefined();
    expect(doneParameters(2).not).toEqual({});
    expect(doneParameters(3).not).toBeUndefined();
    // Nor a question to the human, at that answer only.
    const askParameters = (n: number) => (tools[n] ?? []).find((t) => t.name === 'request_human_input')!.parameters as Record<string, unknown>;
    expect(askParameters(1).not).toBeUndefined();
    expect(askParameters(2).not).toEqual({});
    expect(askParameters(3).not).toBeUndefined();
  });

  it('is answered once when a radio was clicked in a form never sent: a click on a radio fills the form, it does not send it', async () => {
    await page.goto('http://site.test/plan');
    const { results, requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [done], [done]]);
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'click_element'],
      ['continue', 'done'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not accepted yet: you filled [2] but the form was not sent (its button [3] "Submit" was not pressed). Press [3] to send it, or if the task is complete as it is, call done again.');
  });

  it('is answered once after a press of a button of the form that does not send it (a week strip\'s "Later dates"), the form unsent', async () => {
    await page.goto('http://site.test/booking');
    const { results, requests } = await run([[{ tool: 'select_option', args: { index: 1, value: '4' } }], [{ tool: 'click_element', args: { index: 2 } }], [done], [done]]);
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'select_option'],
      ['continue', 'click_element'],
      ['continue', 'done'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(requests[3]).at(-1)).toBe('Not accepted yet: you filled [1] but the form was not sent (its button [4] "Book table" was not pressed). Press [4] to send it, or if the task is complete as it is, call done again.');
  });

  it('counts a button of the form that stays pressed (a time slot) as a value chosen, not as the form sent', async () => {
    await page.goto('http://site.test/booking');
    const { requests } = await run([[{ tool: 'click_element', args: { index: 3 } }], [done], [done]]);
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not accepted yet: you filled [3] but the form was not sent (its button [4] "Book table" was not pressed). Press [4] to send it, or if the task is complete as it is, call done again.');
  });

  it('is answered once when the page shows an error at a field', async () => {
    await page.goto('http://site.test/checked');
    const { results, requests } = await run([[{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'click_element', args: { index: 3 } }], [done]]);
    expect(results.map((r) => r.kind)).toEqual(['continue', 'continue', 'continue', 'done']);
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not accepted yet: the page shows "Email is required" at a field\./);
  });

  it("says a press the browser's own check refused, with the fields and why, answers a done after it once, and is sent once they are corrected", async () => {
    await page.goto('http://site.test/contact-form');
    const { results, requests } = await run([
      [{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'input_text', args: { index: 2, text: 'Please send my invoice' } }, { tool: 'click_element', args: { index: 4 } }],
      [done],
      [{ tool: 'input_text', args: { index: 2, text: 'ada@example.com' } }, { tool: 'input_text', args: { index: 3, text: 'Please send my invoice' } }, { tool: 'click_element', args: { index: 4 } }],
      [done],
    ]);
    const refused = '[2] "Email" (not an e-mail address) and [3] "Message" (required, empty)';
    expect(toolAnswers(requests[1]).at(-1)).toBe(`Clicked [4] button "Send"; the form was not sent: the browser refused ${refused}. Correct them, then press [4] again`);
    expect(toolAnswers(requests[2]).at(-1)).toBe(`Not accepted yet: the browser refuses ${refused}, so the form was not sent. Finish what the task needs, or if it is complete as it is, call done again.`);
    expect(toolAnswers(requests[3]).at(-1)).toBe('Clicked [4] button "Send"; page is now http://site.test/sent?name=Ada&email=ada%40example.com&message=Please+send+my+invoice');
    expect(results.map((r) => r.kind).at(-1)).toBe('done');
    expect(page.url()).toBe('http://site.test/sent?name=Ada&email=ada%40example.com&message=Please+send+my+invoice');
  });

  it('is answered once when the task gives a value never typed while the page shows an empty field, a navigate to the page it shows in between', async () => {
    await page.goto('http://site.test/callback');
    const prompt = 'Reject all cookies, then ask for a callback to the phone number 555-0100.';
    const { results, requests } = await run([[{ tool: 'navigate', args: { url: 'http://site.test/callback' } }], [done], [done]], 8, { prompt });
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'navigate'],
      ['continue', 'done'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not accepted yet: the task gives "555-0100", which you have not typed, and the page shows [1] "Phone number" empty. Type it into the field it belongs to (input_text), then send the form; if the task is complete as it is, call done again.',
    );
    // typed, the value is not said again: the form unsent is
    await page.goto('http://site.test/callback');
    const typed = await run([[{ tool: 'input_text', args: { index: 1, text: '555 0100' } }], [{ tool: 'navigate', args: { url: 'http://site.test/callback' } }], [done], [done]], 8, { prompt });
    // The navigate that did nothing says the form is still to send, and with what.
    expect(toolAnswers(typed.requests[2]).at(-1)).toBe(
      'Not opened: the tab already shows http://site.test/callback, and the observation is that page. To load it again, call navigate with it once more. You filled [1] but the form was not sent (its button [2] "Call me back" was not pressed): press [2] to send it.',
    );
    expect(toolAnswers(typed.requests[3]).at(-1)).toBe('Not accepted yet: you filled [1] but the form was not sent (its button [2] "Call me back" was not pressed). Press [2] to send it, or if the task is complete as it is, call done again.');
  });

  it('is not said sent for the end of the task when the page after the press shows the form again, empty', async () => {
    await page.goto('http://site.test/login-refused');
    const fill: Call[] = [{ tool: 'input_text', args: { index: 1, text: 'sam@example.com' } }, { tool: 'input_text', args: { index: 2, text: 'wrong' } }, { tool: 'click_element', args: { index: 3 } }];
    const { requests } = await run([fill, [done], [done]], 8);
    expect(lastObservation(requests[1])).toContain('URL: http://site.test/login-refused?email=');
    expect(lastObservation(requests[1])).toContain('Note: the form was sent, but this page shows it again with "E-mail", "Password" empty: read what the page says (a refusal, a field it asks for); fill the fields again with what the task gives, then send it.');
    expect(lastObservation(requests[1])).not.toContain('the form you filled was sent');
  });

  it('is accepted at once after the form was sent, whose new page the observation says came from the press', async () => {
    await page.goto('http://site.test/form');
    const { results, requests } = await run([[{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'click_element', args: { index: 3 } }], [done]]);
    expect(results.map((r) => r.kind)).toEqual(['continue', 'continue', 'done']);
    expect(closingLines(requests[1]).slice(-2)).toEqual([
      'Changed: URL is now http://site.test/sent?name=Ada&email=; title is now "Thanks"',
      'Note: the form you filled was sent and a new page opened: if the task asks for nothing more, call done.',
    ]);
  });
});

describe('the note after a form was sent', () => {
  it('names what the new page still holds that the task names, and does not offer done', async () => {
    await page.goto('http://site.test/wizard');
    const fill: Call[] = [{ tool: 'input_text', args: { index: 1, text: 'Joan Clarke' } }, { tool: 'click_element', args: { index: 2 } }];
    const { requests } = await run([fill, [done]], 8, { prompt: 'Check out with the name Joan Clarke and Express shipping, and place the order.' });
    expect(closingLines(requests[1]).at(-1)).toBe('Note: the form you filled was sent and a new page opened, which shows what the task still names: [2] radio "Express (1 day)", [3] button "Place order".');
  });

  it('answers a done on that page once with what the task still names, and takes it when repeated', async () => {
    await page.goto('http://site.test/wizard');
    const fill: Call[] = [{ tool: 'input_text', args: { index: 1, text: 'Joan Clarke' } }, { tool: 'click_element', args: { index: 2 } }];
    const { requests, results } = await run([fill, [done], [done]], 8, { prompt: 'Check out with the name Joan Clarke and Express shipping, and place the order.' });
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not accepted yet: the form you filled was sent, and this page shows what the task still names: [2] radio "Express (1 day)", [3] button "Place order". Choose or press them first; if the task is complete as it is, call done again.');
    expect(results.at(-1)?.kind).toBe('done');
  });
});

describe('a done while a list is on another option than the one the task names', () => {
  it('is answered once with the list and the option, and taken when repeated', async () => {
    await page.goto('http://site.test/shop-settings');
    const { requests, results } = await run([[done], [done]], 8, { prompt: 'I would like to see the prices in Swiss francs.' });
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not accepted yet: this page shows what the task still names: [2] "Show prices in" on "Euro (EUR)" while the task says "Swiss franc (CHF)". Choose or press it first; if the task is complete as it is, call done again.');
    expect(results.at(-1)?.kind).toBe('done');
  });

  it('is taken at once when the list is on the option the task names', async () => {
    await page.goto('http://site.test/shop-settings');
    const { requests, results } = await run([[done]], 8, { prompt: 'I would like to see the prices in English.' });
    expect(requests).toHaveLength(1);
    expect(results.at(-1)?.kind).toBe('done');
  });
});

describe('a press that would send a form with empty fields (a model that follows the schemas)', () => {
  const press: Call = { tool: 'click_element', args: { index: 4 } };

  it('is held once with the empty fields named, and sends the form as it is when pressed again', async () => {
    await page.goto('http://site.test/apply');
    const { results, requests } = await run([[{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, press], [press], [done]], 8, { followsSchemas: true });
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'input_text'],
      ['continue', 'click_element'],
      ['continue', 'click_element'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [2] "CV file", [3] "Start" empty. Fill them first with what the task gives (upload_file or select_option); if the task gives nothing for them, press [4] again to send the form as it is.',
    );
    expect(lastObservation(requests[1])).toContain('URL: http://site.test/apply');
    expect(lastObservation(requests[2])).toContain('URL: http://site.test/sent?name=Ada&cv=&start=');
  });

  it('is held a second time while the task gives the value of an empty field, and sends the form when pressed a third time', async () => {
    await page.goto('http://site.test/member-password');
    const logIn: Call = { tool: 'click_element', args: { index: 3 } };
    const prompt = 'Until when is my membership valid? Log in with sam@example.com, password Peach-Tree-77.';
    const { requests } = await run([[{ tool: 'input_text', args: { index: 2, text: 'Peach-Tree-77' } }, logIn], [logIn], [logIn], [done]], 8, { followsSchemas: true, prompt });
    for (const n of [1, 2]) {
      expect(toolAnswers(requests[n]).at(-1)).toMatch(/^Not pressed yet: this would send the form with \[1\] "E-mail" empty\. First type "sam@example\.com" into \[1\]/);
      expect(lastObservation(requests[n])).toContain('URL: http://site.test/member-password');
    }
    expect(lastObservation(requests[3])).toContain('URL: http://site.test/sent?email=&password=');
  });

  it('is held a second time while only a list to choose from is empty, asking for the option that fits, and sends the form when pressed a third time', async () => {
    await page.goto('http://site.test/topic');
    const send: Call = { tool: 'click_element', args: { index: 2 } };
    const prompt = 'My parcel came with the vase inside broken. Let their support know.';
    const { requests } = await run([[send], [send], [send], [done]], 8, { followsSchemas: true, prompt });
    for (const n of [1, 2]) {
      expect(toolAnswers(requests[n]).at(-1)).toBe(
        'Not pressed yet: this would send the form with [1] "What is it about?" empty. First choose in it the option that fits the task (select_option); if none fits, press [2] again to send the form as it is.',
      );
    }
    expect(lastObservation(requests[3])).toContain('URL: http://site.test/sent?topic=');
  });

  it('offers only the tools that fill after a press held for a file field while the task has a file', async () => {
    await page.goto('http://site.test/apply');
    const files = { forTask: async () => ({ available: () => [{ fileId: 'file_1a', name: 'cv-grace.txt', size: 10 }], localPath: async () => '/dev/null' }) };
    const { llm, tools } = scriptedLlm([[{ tool: 'input_text', args: { index: 1, text: 'Grace Hopper' } }, { tool: 'select_option', args: { index: 3, value: 'May' } }, { tool: 'click_element', args: { index: 4 } }], [done], [done]], { followsSchemas: true });
    const { runner } = runnerOnTab(tab, llm, undefined, files);
    await runSteps(runner, 6, { prompt: 'Apply as Grace Hopper, starting in May, with my CV.' });
    const offered = (n: number) => (tools[n] ?? []).filter((t) => (t.parameters as { not?: unknown }).not === undefined).map((t) => t.name);
    expect(offered(1)).toContain('upload_file');
    expect(offered(1)).not.toContain('send_keys');
    expect(offered(1)).not.toContain('click_element');
  });

  it('offers only the tools that fill in the answer after a press held with the values the task gives', async () => {
    await page.goto('http://site.test/member-password');
    const prompt = 'Until when is my membership valid? Log in with sam@example.com, password Peach-Tree-77.';
    const { tools } = await run([[{ tool: 'click_element', args: { index: 3 } }], [{ tool: 'input_text', args: { index: 1, text: 'sam@example.com' } }], [done]], 8, { followsSchemas: true, prompt });
    const offered = (n: number) => (tools[n] ?? []).filter((t) => (t.parameters as { not?: unknown }).not === undefined).map((t) => t.name).sort();
    expect(offered(1)).toEqual(['input_text', 'select_option', 'upload_file'].filter((name) => offered(0).includes(name)));
    expect(offered(1)).toContain('input_text');
    expect(offered(2)).toContain('click_element');
  });

  it('names the values the task gives that were not typed yet, with the empty field', async () => {
    await page.goto('http://site.test/callback');
    const { requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [done], [done]], 8, { followsSchemas: true, prompt: 'Ask for a callback to the phone number 555-0100.' });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [1] "Phone number" empty. First type "555-0100" into [1] (input_text); if the task gives nothing for it, press [2] again to send the form as it is.',
    );
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not accepted yet: the form was not sent: your press of [2] was held because [1] "Phone number" was empty. First type "555-0100" into [1], then press [2]; if the task is complete as it is, call done again.',
    );
  });

  it('holds a navigate away from a filled form not sent once, and opens the page when asked again', async () => {
    await page.goto('http://site.test/signin');
    const fill: Call[] = [{ tool: 'input_text', args: { index: 1, text: 'ada' } }, { tool: 'input_text', args: { index: 2, text: 'pw' } }];
    const away: Call = { tool: 'navigate', args: { url: 'http://site.test/profile' } };
    const giveUp: Call = { ...done, args: { message: 'no', success: false } };
    const { results, requests } = await run([fill, [away], [away], [giveUp], [giveUp]], 8, { followsSchemas: true });
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'input_text'],
      ['continue', 'input_text'],
      ['continue', 'navigate'],
      ['continue', 'navigate'],
      // an early give-up is answered once (give-up.ts)
      ['continue', 'done'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not opened yet: you filled [1], [2] but the form was not sent (its button [3] "Sign in" was not pressed), and leaving the page loses what you typed. Press [3] first; to leave anyway, call navigate again.',
    );
    expect(lastObservation(requests[2])).toContain('URL: http://site.test/signin');
    expect(lastObservation(requests[3])).toContain('URL: http://site.test/profile');
  });

  it('holds Enter in a field of a form with an empty field', async () => {
    await page.goto('http://site.test/form');
    const { requests } = await run([[{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'send_keys', args: { keys: 'Enter' } }], [done], [done]], 8, { followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [2] "Email" empty. First type "ada@example.com" into [2] (input_text); if the task gives nothing for it, press Enter again to send the form as it is.',
    );
    expect(lastObservation(requests[1])).toContain('URL: http://site.test/form');
  });

  it('stops an action list at the press held, holds it again while other fields are still empty, and sends it when pressed again as it was held', async () => {
    await page.goto('http://site.test/apply');
    const enter: Call = { tool: 'send_keys', args: { keys: 'Enter' } };
    const { requests, tools } = await run([[press, done], [{ tool: 'input_text', args: { index: 1, text: 'Ada' } }], [enter], [enter], [done]], 8, { followsSchemas: true });
    // The held button is not offered to the answer just after the hold, and is again after it.
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(pressable(0)).toContain(4);
    expect(pressable(1)).not.toContain(4);
    expect(pressable(2)).toContain(4);
    expect(toolAnswers(requests[1])).toEqual([
      expect.stringMatching(/^Not pressed yet: this would send the form with \[1\] "Your name", \[2\] "CV file", \[3\] "Start" empty\./),
      'Not performed: the list stopped because click_element [4] before it was not performed.',
    ]);
    // The name typed, the other two still empty: held again, naming them.
    expect(toolAnswers(requests[3]).at(-1)).toMatch(/^Not pressed yet: this would send the form with \[2\] "CV file", \[3\] "Start" empty\. .* press Enter again to send the form as it is\.$/);
    expect(lastObservation(requests[3])).toContain('URL: http://site.test/apply');
    // Pressed again with the same fields empty: sent as it is.
    expect(lastObservation(requests[4])).toContain('URL: http://site.test/sent?name=Ada');
  });

  it('holds a press while a checkbox the task asks to tick is unticked, and sends the form once it is ticked', async () => {
    await page.goto('http://site.test/terms');
    const press: Call = { tool: 'click_element', args: { index: 3 } };
    const { requests, tools } = await run([[press], [{ tool: 'click_element', args: { index: 2 } }], [press], [done]], 8, { followsSchemas: true, prompt: 'Accept the terms of service (do not sign up for offers) and press Continue.' });
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    // the next answer may press the box to tick, not the other box nor the button
    expect(pressable(1)).toEqual([2]);
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [2] "I accept the terms of service" unticked while the task asks for it. First tick [2] (click_element); if it is as the task wants, press [3] again to send the form as it is.',
    );
    expect(lastObservation(requests[1])).toMatch(/^\[2\] checkbox "I accept the terms of service"$/m);
    expect(lastObservation(requests[3])).toContain('URL: http://site.test/terms-refused?terms=on');
  });

  it('holds a press that would tick a box the task names only in a clause that says no', async () => {
    await page.goto('http://site.test/terms');
    const offers: Call = { tool: 'click_element', args: { index: 1 }, says: 'The checkbox is not ticked, so it needs to be ticked first.' };
    const { requests } = await run([[offers], [done]], 8, { followsSchemas: true, prompt: 'Accept the terms of service (do not sign up for offers) and press Continue.' });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not pressed: the task names \[2\] checkbox "I accept the terms of service" \(not checked now\), not \[1\] checkbox "Send me special offers"/);
    expect(lastObservation(requests[1])).toMatch(/^\[1\] checkbox "Send me special offers"$/m);
  });

  it('holds a press while a text field holds another value than the task sets it to', async () => {
    await page.goto('http://site.test/city');
    const save: Call = { tool: 'click_element', args: { index: 2 } };
    const { requests } = await run([[save], [{ tool: 'input_text', args: { index: 1, text: 'Lyon' } }, save], [done]], 8, { followsSchemas: true, prompt: 'Change the city in the profile to Lyon and save the profile' });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [1] "City" holding "Paris" while the task says "Lyon". First type "Lyon" into [1] (input_text); if it is as the task wants, press [2] again to send the form as it is.',
    );
    expect(lastObservation(requests[2])).toContain('URL: http://site.test/sent?city=Lyon');
  });

  it('holds a save while a field of the address holds another part than the task gives, and sends it once they are typed', async () => {
    await page.goto('http://site.test/address');
    const save: Call = { tool: 'click_element', args: { index: 4 } };
    const prompt = 'Change my delivery address to 12 Quay Street, Cork T12 X4P2.';
    const typed = [{ tool: 'input_text', args: { index: 1, text: '12 Quay Street' } }, { tool: 'input_text', args: { index: 3, text: 'T12X4P2' } }];
    const { requests } = await run([[typed[0], save], [typed[1], save], [done]], 8, { followsSchemas: true, prompt });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [3] "Eircode" holding "T23 K8C1" while the task says "T12 X4P2". First type "T12 X4P2" into [3] (input_text); if it is as the task wants, press [4] again to send the form as it is.',
    );
    // (the postcode typed without its space is the same postcode)
    expect(lastObservation(requests[2])).toContain('URL: http://site.test/sent?street=12+Quay+Street&town=Cork&code=T12X4P2');
  });

  it('answers a done after the held field was set with the form unsent, not with the hold', async () => {
    await page.goto('http://site.test/city');
    const { requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [{ tool: 'input_text', args: { index: 1, text: 'Lyon' } }], [done], [done]], 8, {
      followsSchemas: true,
      prompt: 'Change the city in the profile to Lyon and save the profile',
    });
    expect(toolAnswers(requests[3]).at(-1)).toBe('Not accepted yet: you filled [1] but the form was not sent (its button [2] "Save profile" was not pressed). Press [2] to send it, or if the task is complete as it is, call done again.');
  });

  it('holds a button outside a form while a combobox the observation shows is on another option than the task names', async () => {
    await page.goto('http://site.test/ticket');
    const save: Call = { tool: 'click_element', args: { index: 2 } };
    const { requests } = await run([[save], [{ tool: 'select_option', args: { index: 1, value: 'High' } }], [save], [done]], 8, { followsSchemas: true, prompt: 'Set the ticket priority to High and save it' });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: [1] "Priority Normal" on "Normal" while the task says "High" ([1]). First choose "High" in [1] (select_option); if it is as the task wants, press [2] again to go ahead as it is.',
    );
    expect(lastObservation(requests[1])).not.toContain('Saved with');
    expect(lastObservation(requests[3])).toContain('Saved with High');
  });

  it('goes on with the list after an option of an open list is chosen: the list closing is no change of the page', async () => {
    await page.goto('http://site.test/ticket');
    const { results, requests } = await run([[{ tool: 'click_element', args: { index: 1 } }], [{ tool: 'click_element', args: { index: 5 } }, { tool: 'click_element', args: { index: 2 } }, done]], 8, { followsSchemas: true, prompt: 'Set the ticket priority to High and save it' });
    expect(lastObservation(requests[1])).toContain('[5] option "High"');
    expect(results.map((r) => r.action?.name)).toEqual(['click_element', 'click_element', 'click_element', 'done']);
    expect(await page.textContent('#out')).toBe('Saved with High');
    expect(requests).toHaveLength(2);
  });

  it('holds once a choice of the option the list holds already, with the button that saves', async () => {
    await page.goto('http://site.test/ticket');
    const open: Call = { tool: 'click_element', args: { index: 1 } };
    const high: Call = { tool: 'select_option', args: { index: 5, value: 'High' } };
    const { requests } = await run([[open], [high], [open], [high], [{ tool: 'click_element', args: { index: 2 } }], [done]], 8, { followsSchemas: true, prompt: 'Set the ticket priority to High and save it' });
    expect(toolAnswers(requests[4]).at(-1)).toBe(
      'Not chosen: it is chosen already: [1] combobox "Priority High" holds "High". Go on with the rest of the task (press [2] "Save ticket" to save it); if it must be chosen again, choose it again.',
    );
    expect(lastObservation(requests[5])).toContain('Saved with High');
  });

  it('answers a done after a choice outside any form while the page\'s Save button was not pressed', async () => {
    await page.goto('http://site.test/ticket');
    const { requests } = await run([[{ tool: 'select_option', args: { index: 1, value: 'High' } }], [done], [done]], 8, { prompt: 'Set the ticket priority to High and save it' });
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not accepted yet: you filled [1] but the form was not sent (its button [2] "Save ticket" was not pressed). Press [2] to send it, or if the task is complete as it is, call done again.');
  });

  it('holds a press while a choice is on another option than the one the task names, and not once it is chosen', async () => {
    const prompt = 'Change the city in the profile to Lyon, choose express shipping and save';
    await page.goto('http://site.test/profile');
    const save: Call = { tool: 'click_element', args: { index: 4 } };
    const { requests } = await run([[save], [{ tool: 'select_option', args: { index: 1, value: 'Lyon' } }, { tool: 'click_element', args: { index: 3 } }, save], [done]], 8, { followsSchemas: true, prompt });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [1] "City" on "Paris" while the task says "Lyon" ([1]), and [2] "Shipping" on "Standard shipping (free)" while the task says "Express shipping ($9)" ([3]). First choose "Lyon" in [1], choose "Express shipping ($9)" ([3]) (select_option); if they are as the task wants, press [4] again to send the form as it is.',
    );
    expect(lastObservation(requests[2])).toContain('URL: http://site.test/sent?city=Lyon&ship=express');
    // The task names neither option of a choice, or names the one it is on: no hold.
    await page.goto('http://site.test/profile');
    const plain = await run([[save], [done]], 8, { followsSchemas: true, prompt: 'Save the profile as it is, with Paris' });
    expect(lastObservation(plain.requests[1])).toContain('URL: http://site.test/sent?city=Paris&ship=standard');
  });

  it('names a choice on another number than the task gives ("4 guests"), and holds the press that would send it', async () => {
    const prompt = 'Book a table for 4 guests on 14 March 2026.';
    await page.goto('http://site.test/table');
    const book: Call = { tool: 'click_element', args: { index: 3 } };
    const { requests } = await run([[{ tool: 'input_text', args: { index: 1, text: '2026-03-14' } }], [book], [{ tool: 'select_option', args: { index: 2, value: '4' } }], [book], [done]], 8, { followsSchemas: true, prompt });
    expect(lastObservation(requests[0])).toContain('Note: the task gives what these fields take: type "2026-03-14" into [1] and choose "4" in [2].');
    expect(lastObservation(requests[1])).toContain('Note: the task gives what this field takes: choose "4" in [2].');
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not pressed yet: this would send the form with \[2\] "Guests" on "2" while the task says "4"/);
    expect(lastObservation(requests[4])).toContain('URL: http://site.test/sent?date=2026-03-14&guests=4');
  });

  it('answers a done that comes before the held press was made, once, and then a done with the fields filled and the form still unsent', async () => {
    await page.goto('http://site.test/apply');
    const filled = await run([[press], [done], [{ tool: 'input_text', args: { index: 1, text: 'Ada' } }], [done], [press], [press], [done]], 8, { followsSchemas: true });
    expect(filled.results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'click_element'],
      ['continue', 'done'],
      ['continue', 'input_text'],
      ['continue', 'done'],
      ['continue', 'click_element'],
      ['continue', 'click_element'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(filled.requests[4]).at(-1)).toBe('Not accepted yet: you filled [1] but the form was not sent (its button [4] "Send application" was not pressed). Press [4] to send it, or if the task is complete as it is, call done again.');
    // held again: the name filled, the other two still empty; pressed again as it was held, sent
    expect(toolAnswers(filled.requests[5]).at(-1)).toMatch(/^Not pressed yet: this would send the form with \[2\] "CV file", \[3\] "Start" empty\./);
    expect(lastObservation(filled.requests[6])).toContain('URL: http://site.test/sent?name=Ada&cv=&start=');
    await page.goto('http://site.test/apply');
    const { results, requests } = await run([[press], [done], [press], [done]], 8, { followsSchemas: true });
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'click_element'],
      ['continue', 'done'],
      ['continue', 'click_element'],
      ['done', 'done'],
    ]);
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not accepted yet: the form was not sent: your press of [4] was held because [1] "Your name", [2] "CV file", [3] "Start" were empty. Fill them with what the task gives: "ada@example.com", then press [4]; if the task is complete as it is, call done again.',
    );
    expect(lastObservation(requests[3])).toContain('URL: http://site.test/sent?name=&cv=&start=');
  });

  it('answers a done after a held press with the press first, before a done that repeats the task', async () => {
    await page.goto('http://site.test/member-password');
    const prompt = 'Until when is my membership valid? Log in with sam@example.com, password Peach-Tree-77.';
    const echo: Call = { tool: 'done', args: { message: prompt } };
    const { requests } = await run([[{ tool: 'input_text', args: { index: 2, text: 'Peach-Tree-77' } }, { tool: 'click_element', args: { index: 3 } }], [echo], [echo], [echo]], 8, { followsSchemas: true, prompt });
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not accepted yet: the form was not sent: your press of \[3\] was held because \[1\] "E-mail" was empty\. First type "sam@example\.com" into \[1\]/);
    expect(toolAnswers(requests[3]).at(-1)).toMatch(/^Not accepted yet: your answer repeats the task's words\./);
  });

  it('goes ahead at once when every field is filled, and for a model that does not follow the schemas', async () => {
    await page.goto('http://site.test/form');
    const filled = await run([[{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'input_text', args: { index: 2, text: 'a@b.c' } }, { tool: 'click_element', args: { index: 3 } }], [done]], 8, { followsSchemas: true });
    expect(lastObservation(filled.requests[1])).toContain('URL: http://site.test/sent?name=Ada&email=a%40b.c');
    await page.goto('http://site.test/apply');
    const hosted = await run([[press], [done]]);
    expect(lastObservation(hosted.requests[1])).toContain('URL: http://site.test/sent?name=&cv=&start=');
  });
});

describe('a question to the human that asks for what the agent can do (a model that follows the schemas)', () => {
  it('is held twice, request_human_input left out of the next answer each time, and goes to the human when asked a third time', async () => {
    await page.goto('http://site.test/results');
    const ask: Call = { tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Please click the Next page link.' } };
    const scroll: Call = { tool: 'scroll', args: { direction: 'down' } };
    const { results, requests, tools } = await run([[ask], [scroll], [ask], [scroll], [ask]], 8, { followsSchemas: true });
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'request_human_input'],
      ['continue', 'scroll'],
      ['continue', 'request_human_input'],
      ['continue', 'scroll'],
      ['human_input', 'request_human_input'],
    ]);
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not asked: this is for you to do: press, type and choose with the tools/);
    expect(toolAnswers(requests[3]).at(-1)).toMatch(/^Not asked again: this is for you to do: press, type and choose with the tools.* The task is yours to finish with the tools/);
    const askParameters = (n: number) => (tools[n] ?? []).find((t) => t.name === 'request_human_input')!.parameters as Record<string, unknown>;
    expect(askParameters(0).not).toBeUndefined();
    expect(askParameters(1).not).toEqual({});
    expect(askParameters(2).not).toBeUndefined();
    expect(askParameters(3).not).toEqual({});
    expect(askParameters(4).not).toBeUndefined();
  });

  it('is held when it asks for a value the task gives, and names the value', async () => {
    await page.goto('http://site.test/callback');
    const ask: Call = { tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Please provide your phone number.' } };
    const { results, requests } = await run([[ask], [ask], [ask]], 8, { followsSchemas: true, prompt: 'Ask for a callback to the phone number 555-0100.' });
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'request_human_input'],
      ['continue', 'request_human_input'],
      ['human_input', 'request_human_input'],
    ]);
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not asked: the task gives it: "555-0100"; type it with input_text\./);
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not asked again: the task gives it: "555-0100"; type it with input_text\./);
  });

  it('is held when it asks for what the task itself asks, again with the lines the task asks about, and goes to the human when asked a third time', async () => {
    await page.goto('http://site.test/staff');
    const ask: Call = { tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Please provide the names and departments of the people in the staff list.' } };
    const { results, requests } = await run([[ask], [ask], [ask]], 8, { followsSchemas: true, prompt: 'List every person in the staff list with their name and department.' });
    expect(results.map((r) => [r.kind, r.action?.name])).toEqual([
      ['continue', 'request_human_input'],
      ['continue', 'request_human_input'],
      ['human_input', 'request_human_input'],
    ]);
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not asked: this is for you to do: press, type and choose with the tools/);
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not asked again: this is for you to do: press, type and choose with the tools, and to answer with what the page shows, call done with it. The task is yours to finish with the tools: where a page lacks what it needs, go back or open the page that has it.',
    );
    // held again where the page shows the lines the task asks about: with them
    const extract: Call = { tool: 'request_human_input', args: { type: 'human_input_needed', value: "Please extract the payroll person's extension from the page." } };
    const payroll = await run([[extract], [extract], [extract]], 8, { followsSchemas: true, prompt: "Who looks after payroll, and what's their extension?" });
    expect(payroll.results.map((r) => r.kind)).toEqual(['continue', 'continue', 'human_input']);
    expect(toolAnswers(payroll.requests[2]).at(-1)).toMatch(/^Not asked again: this is for you to do: .* This page shows "Jonas Berg \| Payroll \| 2615": if it answers the task, call done with it\.$/);
  });

  it('is held once when asked before any action, and goes to the human when asked after one', async () => {
    await page.goto('http://site.test/results');
    const ask: Call = { tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Could you tell me more about what you are looking for?' } };
    const prompt = 'Find me a sofa in green velvet.';
    const first = await run([[ask], [ask]], 8, { followsSchemas: true, prompt });
    expect(first.results.map((r) => r.kind)).toEqual(['continue', 'human_input']);
    expect(toolAnswers(first.requests[1]).at(-1)).toMatch(/^Not asked: you have not tried the page yet: read it, scroll, press, type and choose with the tools first/);
    const later = await run([[{ tool: 'wait', args: { seconds: 1 } }], [ask]], 8, { followsSchemas: true, prompt });
    expect(later.results.map((r) => r.kind)).toEqual(['continue', 'human_input']);
  });

  it('is held when the page shows the lines the task asks about, with them', async () => {
    await page.goto('http://site.test/staff');
    const ask: Call = { tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Please enter the name and extension of the payroll person.' } };
    const { results, requests } = await run([[ask], [ask]], 8, { followsSchemas: true, prompt: "Who looks after payroll, and what's their extension?" });
    expect(results.map((r) => r.kind)).toEqual(['continue', 'human_input']);
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not asked: this page shows "Jonas Berg | Payroll | 2615". If it does not answer the task, call request_human_input again; if it does, call done with it.');
  });
});

describe('text a press made appear', () => {
  it('is named to the model as the answer to weigh', async () => {
    await page.goto('http://site.test/bike-ad');
    const prompt = "What's the phone number of the person selling this bike?";
    const { requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [{ ...done, args: { message: '06 4817 2093' } }]], 8, { prompt });
    expect(closingLines(requests[1])).toContain('Note: your last action made the page show "Phone: 06 4817 2093". If that answers the task, call done with it.');
  });
});

describe('a wrong tool', () => {
  it('is answered with the right one, and ends the task only when it keeps failing after that', async () => {
    await page.goto('http://site.test/contact');
    const keys = (text: string): Call[] => [{ tool: 'send_keys', args: { keys: text } }];
    const { llm, requests } = scriptedLlm([keys('555-0142'), keys('555-0142.'), keys('Phone: 555-0142'), keys('555 - 0142'), keys('(555) 0142')]);
    const { runner } = runnerOnTab(tab, llm);
    await expect(runSteps(runner, 8)).rejects.toThrow(/failed 5 times in a row/);
    expect(requests).toHaveLength(5);
    expect(toolAnswers(requests[1])[0]).toContain('"555-0142" is not a key: send_keys presses keys such as Enter, Tab or Escape. To type text into a field, call input_text with the field\'s index; to answer the task with this text, call done with it.');
  });

  it('says which button carries the option a radio group has not, and the radio chosen leaves the rest of the task to do', async () => {
    await page.goto('http://site.test/colour-size');
    const prompt = 'Put the rain jacket in navy, size L, in my bag.';
    const { requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [{ tool: 'select_option', args: { index: 2, value: 'L' } }], [{ tool: 'click_element', args: { index: 5 } }], [{ tool: 'click_element', args: { index: 6 } }], [done]], 8, { prompt });
    expect(lastObservation(requests[0])).toContain('Note: the task asks for [2] radio "Navy": it is not chosen yet ([1] "Olive" is); press [2].');
    const afterNavy = closingLines(requests[1]).join('\n');
    expect(afterNavy).toContain('Note: [2] radio "Navy" is now chosen, as the task asks; pressing another radio would undo that. Go on with the rest of the task.');
    expect(afterNavy).not.toMatch(/may be done/);
    expect(toolAnswers(requests[2]).at(-1)).toContain('its options are: "Olive", "Navy". "L" is not an option there: it is [5] button "L" of the page; press it with click_element, index 5.');
    expect(lastObservation(requests[4])).toMatch(/^URL: http:\/\/site\.test\/sent\?colour=navy&size=L/m);
  });

  it('says a link is not a field, and what to do instead', async () => {
    await page.goto('http://site.test/contact');
    const { requests } = await run([[{ tool: 'input_text', args: { index: 1, text: '555-0142' } }], [{ ...done, args: { message: '555-0142' } }]]);
    expect(toolAnswers(requests[1])[0]).toMatch(/\[1\] is a link, not a field, and the page shows no text field: to answer, call done with the text/);
  });
});

describe('a press that changed nothing visible', () => {
  it('leaves the element out of what a model that follows the schemas may press while the page looks the same', async () => {
    await page.goto('http://site.test/booking');
    const slot: Call = { tool: 'click_element', args: { index: 3 } };
    const { tools } = await run([[slot], [slot], [{ tool: 'select_option', args: { index: 1, value: '4' } }], [done]], 8, { followsSchemas: true });
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters as { properties: { index: { enum: unknown[] } } }).properties.index.enum.map(String);
    const three = (v: string) => v === '3' || v.endsWith('[3]');
    expect(pressable(1).some(three)).toBe(true);
    expect(pressable(2).some(three)).toBe(false);
    expect(pressable(3).some(three)).toBe(true);
  });
});

describe('a go_back in a tab with no earlier page', () => {
  it('is not offered again to a model that follows the schemas while the tab shows that page, and is after it moved on', async () => {
    await page.goto('http://site.test/results');
    const { requests, tools } = await run([[{ tool: 'go_back', args: {} }], [{ tool: 'click_element', args: { index: 2 } }], [done]], 8, { followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Action failed: Going back failed: there is no earlier page in this tab/);
    const goBack = (n: number) => (tools[n] ?? []).find((t) => t.name === 'go_back')!.parameters as { not?: unknown };
    expect(goBack(0).not).toBeUndefined();
    expect(goBack(1).not).toEqual({});
    expect(goBack(2).not).toBeUndefined();
  });
});

describe('navigate (a model that follows the schemas)', () => {
  it('is offered only when the task names an address', async () => {
    await page.goto('http://site.test/results');
    const navigateOf = (tools: unknown[][], n: number) => ((tools[n] ?? []) as { name: string; parameters: Record<string, unknown> }[]).find((t) => t.name === 'navigate')!.parameters;
    const plain = await run([[done]], 8, { followsSchemas: true, prompt: 'How much is the Pine Chair? Ask sam@example.com if unsure.' });
    expect(navigateOf(plain.tools, 0).not).toEqual({});
    const named = await run([[done]], 8, { followsSchemas: true, prompt: 'Open site.test/results2 and tell me the price of the Oak Rocking Chair.' });
    expect(navigateOf(named.tools, 0).not).toBeUndefined();
  });
});

describe('going back and forth between two pages', () => {
  const next: Call = { tool: 'click_element', args: { index: 2 } };
  it('is named on the second arrival, and what leads back (and go_back) is not offered to a model that follows the schemas', async () => {
    await page.goto('http://site.test/results');
    const { requests, tools } = await run([[next], [next], [next], [{ tool: 'done', args: { message: '$149' } }]], 8, { followsSchemas: true });
    // results → results 2 → results → results 2: the fourth answer is asked on results 2, the second time there from results.
    expect(lastObservation(requests[2])).not.toContain('Note: this is the second time');
    expect(lastObservation(requests[3])).toContain('Note: this is the second time you came to this page from http://site.test/results, and you went back there in between; "Previous page" [2] only leads back there.');
    const click = (n: number) => (tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>;
    const goBack = (n: number) => (tools[n] ?? []).find((t) => t.name === 'go_back')!.parameters as Record<string, unknown>;
    expect(click(2).index.enum).toEqual([1, 2]);
    expect(goBack(2).not).toBeUndefined();
    expect(click(3).index.enum).toEqual([1]);
    expect(goBack(3).not).toEqual({});
  });

  it("leaves out of switch_tab the tab of the other page when the agent goes back and forth between two tabs, and takes no tab's number for an element's", async () => {
    const other = await context.newPage();
    await other.goto('http://site.test/results2');
    await page.bringToFront();
    await page.goto('http://site.test/results');
    const to = (index: number): Call => ({ tool: 'switch_tab', args: { index } });
    const { requests, tools } = await run([[to(1)], [to(0)], [to(1)], [to(0)], [done]], 8, { followsSchemas: true, prompt: 'Tell me what the shop sells.' });
    const tabs = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'switch_tab')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    // results → results 2 → results → results 2 (tabs): on the fourth answer the agent is back on results 2 a second time
    expect([tabs(0), tabs(1), tabs(2), tabs(3), tabs(4)]).toEqual([[1], [0], [1], [], []]);
    expect(lastObservation(requests[3])).toContain('Note: this is the second time you came to this page from http://site.test/results, and you went back there in between; going back only leads there.');
    // a switch to tab [1] was no press of element [1] ("Home"): nothing on results leads back
    expect(lastObservation(requests[4])).toContain('and you went back there in between; going back only leads there.');
    await other.close();
  });

  it('leaves out of switch_tab a tab that shows the page of the active one, while it does', async () => {
    const same = await context.newPage();
    await same.goto('http://site.test/results');
    const other = await context.newPage();
    await other.goto('http://site.test/results2');
    await page.bringToFront();
    await page.goto('http://site.test/results');
    const to = (index: number): Call => ({ tool: 'switch_tab', args: { index } });
    const { requests, tools } = await run([[to(1)], [to(2)], [done]], 8, { followsSchemas: true, prompt: 'Tell me what the shop sells.' });
    const tabs = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'switch_tab')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    // results (tab 0) → results (tab 1): nothing visible changed, so tab 0 is not offered; on results 2 both are
    expect(lastObservation(requests[1])).toContain('Changed: nothing visible changed');
    expect([tabs(0), tabs(1), tabs(2)]).toEqual([[1, 2], [2], [0, 1]]);
    await same.close();
    await other.close();
  });

  it('names two elements pressed in turn with the others of their role, and offers neither at the next answer', async () => {
    await page.goto('http://site.test/tabs');
    const overview: Call = { tool: 'click_element', args: { index: 1 } };
    const reviews: Call = { tool: 'click_element', args: { index: 3 } };
    const { requests, tools } = await run([[reviews], [overview], [reviews], [overview], [done]], 8, { followsSchemas: true, prompt: 'How long does the battery of the Orca S5 last?' });
    const click = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(lastObservation(requests[3])).not.toContain('in turn');
    expect(lastObservation(requests[4])).toContain('Note: you pressed "Reviews" and "Overview" in turn, twice each; each only shows again what it showed before. Press another: [2] tab "Specifications"; or, if the page showed what the task asks, call done with it.');
    expect([click(3), click(4)]).toEqual([[1, 2, 3], [2]]);
  });

  it('is not named when the agent goes on to a third page', async () => {
    await page.goto('http://site.test/results');
    const home: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[next], [next], [home], [done]]);
    expect(requests.map((r) => lastObservation(r)).join('\n')).not.toContain('Note: this is the second time');
  });
});

describe('a press of another element than the words name (a model that follows the schemas)', () => {
  const says = "The priority is right, so I click the 'Save ticket' button.";
  it('is held once with the index named, and the named one pressed then', async () => {
    await page.goto('http://site.test/ticket');
    const open: Call = { tool: 'click_element', args: { index: 1 } };
    const { results, requests, tools } = await run([[open], [{ tool: 'click_element', args: { index: 4 }, says }], [{ tool: 'click_element', args: { index: 2 }, says }], [done]], 8, { followsSchemas: true });
    expect(results.map((r) => r.kind)).toEqual(['continue', 'continue', 'continue', 'done']);
    expect(lastObservation(requests[1])).toContain('[4] option "Normal"');
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not pressed: you wrote that you press "Save ticket", which is [2]; [4] is option "Normal". To press "Save ticket", call click_element with index 2; if [4] is what you meant, press [4] again.');
    // the element held is not offered in the answer right after
    expect(((tools[2] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum).not.toContain(4);
    expect(lastObservation(requests[3])).toContain('Saved with Normal');
  });

  it('holds once a tool that presses nothing while the words say to press an element, and does the press then', async () => {
    await page.goto('http://site.test/months');
    const says = "The date is not among the days shown. Press [1] button 'Next month' to show later ones.";
    const scroll: Call = { tool: 'scroll', args: { direction: 'down' }, says };
    const { requests } = await run([[scroll], [{ tool: 'click_element', args: { index: 1 }, says }], [done]], 8, { followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not done: you wrote that you press [1] button "Next month", and called scroll, which presses nothing. To press it, call click_element with index 1; if scroll is what you meant, call it again.');
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    expect(lastObservation(requests[2])).toContain('January 2027');
  });

  it('is held once when no element has the name the words give, with the line of the page that holds it', async () => {
    await page.goto('http://site.test/staff');
    const away: Call = { tool: 'click_element', args: { index: 1 }, says: "I will click on the 'Payroll' link to go to the payroll page." };
    const { requests } = await run([[away], [away], [done]], 8, { prompt: "Who looks after payroll, and what's their extension?", followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed: no element of the page is named "Payroll"; [1] is link "Intranet". The page\'s text shows "Jonas Berg | Payroll | 2615": if [1] is what you meant, press [1] again; if that text answers the task, call done with it.',
    );
    expect(toolAnswers(requests[2]).at(-1)).toContain('Clicked [1] link "Intranet"');
  });

  it('holds once a typing into another field than the words name, with the field they name', async () => {
    await page.goto('http://site.test/form');
    const wrong: Call = { tool: 'input_text', args: { index: 1, text: 'ada@example.com' }, says: "I type 'ada@example.com' into the email field." };
    const { requests } = await run([[wrong], [wrong], [done], [done]], 8, { followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not typed: you wrote that you type into "Email", which is [2]; [1] is textbox "Name". To type there, call input_text with index 2; if [1] is what you meant, type into [1] again.');
    expect(toolAnswers(requests[2]).at(-1)).toBe('Typed "ada@example.com" into [1] textbox "Name"');
  });

  it('does not send the agent back to a button whose second press was just held', async () => {
    await page.goto('http://site.test/mugs');
    const green: Call = { tool: 'click_element', args: { index: 2 } };
    const white: Call = { tool: 'click_element', args: { index: 1 }, says: "I click the 'Add Green Mug to cart' button." };
    const { requests } = await run([[green], [green], [white], [done]], 8, { prompt: 'Add the Green Mug to the cart. Add nothing else.', followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not pressed again: you pressed \[2\]/);
    expect(toolAnswers(requests[3]).at(-1)).toBe(
      'Not pressed: you wrote that you press "Add Green Mug to cart" [2], which you pressed already: a second press adds again. If the task asks for one, it is done: call done. [1] is another element; if it is what you meant, press [1] again.',
    );
    expect(await page.textContent('#c')).toBe('In your cart: Green Mug');
  });

  it('holds, in a task that asks for one, a cart button pressed already whatever came between, and presses it when pressed again right after its hold', async () => {
    await page.goto('http://site.test/mugs');
    const green: Call = { tool: 'click_element', args: { index: 2 } };
    const white: Call = { tool: 'click_element', args: { index: 1 }, says: "I click the 'Add Green Mug to cart' button." };
    const { requests } = await run([[green], [green], [white], [green], [green], [done]], 8, { prompt: 'Add the Green Mug to the cart. Add nothing else.', followsSchemas: true });
    const again = 'Not pressed again: you pressed [2] "Add Green Mug to cart" already in this task, and each press adds one more. The task asks for one: if the page shows it in the cart, call done. If the task asks for more, press it again at your next step.';
    expect([toolAnswers(requests[2]).at(-1), toolAnswers(requests[4]).at(-1), toolAnswers(requests[5]).at(-1)]).toEqual([
      'Not pressed again: you pressed [2] "Add Green Mug to cart" at your last step and the page changed (the page now shows "In your cart: Green Mug"). A second press adds a second one. If the task asks for one, that is done: call done. If it asks for more, press it again after your next step.',
      again,
      'Clicked [2] button "Add Green Mug to cart"',
    ]);
    expect(await page.textContent('#c')).toBe('In your cart: Green Mug, Green Mug');
    // a task that asks for two: a second press after another action is made
    await page.goto('http://site.test/mugs');
    const pause: Call = { tool: 'wait', args: { seconds: 1 } };
    await run([[green], [pause], [green], [done]], 8, { prompt: 'Add two Green Mugs to the cart.', followsSchemas: true });
    expect(await page.textContent('#c')).toBe('In your cart: Green Mug, Green Mug');
  });

  it('offers only done after four actions held in a row, says why, and offers all again once an action is performed', async () => {
    await page.goto('http://site.test/mugs');
    const green: Call = { tool: 'click_element', args: { index: 2 } };
    const white: Call = { tool: 'click_element', args: { index: 1 } };
    const prompt = 'Add the Green Mug to the cart. Add nothing else.';
    const { results, requests, tools } = await run([[green], [green], [white], [green], [white], [done]], 8, { prompt, followsSchemas: true });
    const choosableOf = (specs: typeof tools, n: number) => (specs[n] ?? []).filter((t) => (t.parameters as { not?: unknown }).not === undefined).map((t) => t.name);
    const choosable = (n: number) => choosableOf(tools, n);
    expect(requests.slice(1, 5).map((r) => toolAnswers(r).at(-1)?.slice(0, 12))).toEqual(['Clicked [2] ', 'Not pressed ', 'Not pressed:', 'Not pressed ']);
    expect(toolAnswers(requests[5]).at(-1)).toMatch(/^Not pressed: \[1\]/);
    expect(choosable(4)).toContain('click_element');
    expect(lastObservation(requests[4])).not.toContain('were held back');
    expect(choosable(5)).toEqual(['done', 'request_human_input']);
    expect(lastObservation(requests[5])).toContain(
      'Note: your last 4 actions were held back and none was performed. Call done now: with the answer if the page shows the task complete, else with success=false and what stands in the way (or request_human_input for what only a person can give).',
    );
    expect(results.at(-1)?.kind).toBe('done');
    expect(await page.textContent('#c')).toBe('In your cart: Green Mug');
    // three holds, then a press made: every tool is offered again
    await page.goto('http://site.test/mugs');
    const again = await run([[green], [green], [white], [green], [green], [white], [done]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(again.requests[5]).at(-1)).toBe('Clicked [2] button "Add Green Mug to cart"');
    expect(choosableOf(again.tools, 6)).toContain('click_element');
  });

  it('presses a cart button again when the page said nothing went into the cart (a size to choose first)', async () => {
    await page.goto('http://site.test/jacket');
    const add: Call = { tool: 'click_element', args: { index: 2 } };
    const { requests } = await run([[add], [{ tool: 'select_option', args: { index: 1, value: 'L' } }], [add], [done]], 8, { prompt: 'Add the rain jacket to my bag.', followsSchemas: true });
    expect(toolAnswers(requests[3]).at(-1)).toBe('Clicked [2] button "Add to bag"');
    expect(await page.textContent('#c')).toBe('Added to bag: size L');
  });

  it('holds once a cart button of another item than the one the task names, and presses it when pressed again', async () => {
    await page.goto('http://site.test/mugs');
    const white: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[white], [white], [done]], 8, { prompt: 'Add the Green Mug to the cart.', followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not pressed: [1] "Add White Mug to cart" adds what the task does not name; the task names [2] "Add Green Mug to cart". If it is in the cart already, call done. If [1] is what you meant, press it again at your next step.');
    expect(await page.textContent('#c')).toBe('In your cart: White Mug');
  });

  it('goes ahead when pressed again, and for a model that does not follow the schemas', async () => {
    await page.goto('http://site.test/ticket');
    const open: Call = { tool: 'click_element', args: { index: 1 } };
    const wrong: Call = { tool: 'click_element', args: { index: 4 }, says };
    const again = await run([[open], [wrong], [wrong], [done]], 8, { followsSchemas: true });
    expect(toolAnswers(again.requests[3]).at(-1)).toBe('Clicked [4] option "Normal"');
    await page.goto('http://site.test/ticket');
    const hosted = await run([[open], [wrong], [done]]);
    expect(toolAnswers(hosted.requests[2]).at(-1)).toBe('Clicked [4] option "Normal"');
  });
});

describe('a login sent empty while the task has secrets for it (a model that follows the schemas)', () => {
  it('is held with the placeholder of each field, only filling offered next, and the secrets typed go in', async () => {
    await page.goto('http://site.test/signin');
    const { llm, requests, tools } = scriptedLlm(
      [
        [{ tool: 'click_element', args: { index: 3 } }],
        [{ tool: 'input_text', args: { index: 1, text: '<secret>username</secret>' } }, { tool: 'input_text', args: { index: 2, text: '<secret>password</secret>' } }, { tool: 'click_element', args: { index: 3 } }],
        [done],
      ],
      { followsSchemas: true },
    );
    const { runner } = runnerOnTab(tab, llm, undefined, undefined, [{ match: 'http://site.test', fields: { username: 'ada', password: 'pw-Secret-1' } }]);
    await runSteps(runner, 6, { prompt: 'Sign in with the username and password from your secrets.', hasSecrets: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [1] "Username", [2] "Password" empty. First type "<secret>username</secret>" into [1] and type "<secret>password</secret>" into [2] (input_text); if the task gives nothing for them, press [3] again to send the form as it is.',
    );
    expect((tools[1] ?? []).find((t) => t.name === 'click_element')!.parameters).toHaveProperty('not');
    expect(page.url()).toBe('http://site.test/sent?user=ada&pw=pw-Secret-1');
  });
});

describe('a form sent with every field empty', () => {
  it('is held with what the task gives for each field, by what the field is', async () => {
    await page.goto('http://site.test/form');
    const send: Call = { tool: 'click_element', args: { index: 3 } };
    const { requests } = await run([[send], [done]], 8, { prompt: 'Sign Tom Baker up, with the address tom.baker@example.org.', followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [1] "Name", [2] "Email" empty. First type "Tom Baker" into [1] and type "tom.baker@example.org" into [2] (input_text); if the task gives nothing for them, press [3] again to send the form as it is.',
    );
  });
});

describe('a field its label calls optional', () => {
  it('does not hold the press that sends the form; another empty field does', async () => {
    await page.goto('http://site.test/race-entry');
    const typeName: Call = { tool: 'input_text', args: { index: 1, text: 'Ana Silva' } };
    const send: Call = { tool: 'click_element', args: { index: 4 } };
    const { requests } = await run([[typeName], [send], [done]], 8, { prompt: 'Enter Ana Silva.', followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not pressed yet: this would send the form with [3] "Team" empty. Fill it first with what the task gives (input_text); if the task gives nothing for it, press [4] again to send the form as it is.');
  });
});

describe('a link pressed away from a form filled and not sent (a model that follows the schemas)', () => {
  it('is held once with the button that sends it, and followed when pressed again', async () => {
    await page.goto('http://site.test/member-login');
    const typeIt: Call = { tool: 'input_text', args: { index: 1, text: 'sam@example.com' } };
    const join: Call = { tool: 'click_element', args: { index: 3 } };
    const { requests, tools } = await run([[typeIt], [join], [join], [done]], 8, { prompt: 'Log in with sam@example.com.', followsSchemas: true });
    // no link is offered in the answer right after the hold
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(pressable(2)).not.toContain(3);
    expect(pressable(3)).toContain(3);
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not pressed yet: you filled [1] but the form was not sent (its button [2] "Log in" was not pressed), and [3] is a link that may leave the page and lose what you typed. Press [2] first; to follow the link anyway, press [3] again.',
    );
    expect(toolAnswers(requests[3]).at(-1)).toContain('Clicked [3] link "Not a member yet? Join"');
    // the link did not send the form: the next observation does not say it did
    expect(lastObservation(requests[3])).not.toContain('the form you filled was sent');
  });

  it('holds the same text typed again into the field that holds it, once, with what the task gives for the fields still empty', async () => {
    await page.goto('http://site.test/member-password');
    const typePassword: Call = { tool: 'input_text', args: { index: 2, text: 'Peach-Tree-77' } };
    const { requests } = await run([[typePassword], [typePassword], [typePassword], [done]], 8, { prompt: 'Log in with sam@example.com, password Peach-Tree-77.', followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not typed: [2] holds what you typed there already. Type "sam@example.com" into [1]; then send the form with its button.');
    expect(toolAnswers(requests[3]).at(-1)).toBe('Typed •••• into [2] textbox "Password"');
  });

  it('does not hold a typing of the text typed before into a field that holds another value since', async () => {
    await page.goto('http://site.test/city-pick');
    const type: Call = { tool: 'input_text', args: { index: 1, text: 'Lyon' } };
    const { requests } = await run([[type], [{ tool: 'click_element', args: { index: 2 } }], [type], [done]], 8, { followsSchemas: true });
    expect(lastObservation(requests[2])).toContain('[1] now holds "Lyon, France"');
    expect(toolAnswers(requests[3]).at(-1)).toBe('Typed "Lyon" into [1] textbox "City"');
  });

  it('names the values the task gives for the fields still empty', async () => {
    await page.goto('http://site.test/member-password');
    const typePassword: Call = { tool: 'input_text', args: { index: 2, text: 'Peach-Tree-77' } };
    const join: Call = { tool: 'click_element', args: { index: 4 } };
    const { requests } = await run([[typePassword], [join], [done]], 8, { prompt: 'Until when is my membership valid? Log in with sam@example.com, password Peach-Tree-77.', followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not pressed yet: you filled [2] but the form was not sent (its button [3] "Log in" was not pressed), and [4] is a link that may leave the page and lose what you typed. Type "sam@example.com" into [1], then press [3]; to follow the link anyway, press [4] again.',
    );
  });
});

describe('an early give-up (a model that follows the schemas)', () => {
  const giveUp: Call = { tool: 'done', args: { message: 'It is not open on Sundays.', success: false } };
  it('is answered once with the likeliest link, and ends the task when repeated', async () => {
    await page.goto('http://site.test/results');
    const { results, requests } = await run([[giveUp], [giveUp]], 8, { prompt: 'What is the price of the chair on the next page?', followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not ended yet: you gave up before any action. [2] link "Next page" has words of the task: it may lead to what the task asks. Try that first; if the task cannot be done, call done with success=false again.',
    );
    expect(results.map((r) => r.kind)).toEqual(['continue', 'done']);
    expect(results.at(-1)).toMatchObject({ success: false });
  });

  it("is answered with the line below the viewport that answers the task, done still offered", async () => {
    await page.goto('http://site.test/tall-spec');
    const { requests, tools } = await run([[{ ...giveUp, args: { message: 'The page does not say.', success: false } }], [{ tool: 'done', args: { message: '468 g' } }]], 8, { prompt: 'How heavy is the Fennec X2 with its battery?', followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not ended yet: you gave up before any action, but the page's whole text \(below what is in view too\) shows "Weight \(with battery\)\W+468 g"/);
    expect((tools[1] ?? []).find((t) => t.name === 'done')!.parameters).not.toHaveProperty('not');
  });

  it('ends the task at once for a model that does not follow the schemas', async () => {
    await page.goto('http://site.test/results');
    const { results } = await run([[giveUp]], 8, { prompt: 'What is the price of the chair on the next page?' });
    expect(results.map((r) => r.kind)).toEqual(['done']);
  });
});

describe('a search sent empty', () => {
  it('is held with what the task names to search for', async () => {
    await page.goto('http://site.test/books');
    const find: Call = { tool: 'click_element', args: { index: 2 } };
    const { requests } = await run([[find], [done]], 8, { prompt: 'Find the cheapest copy of Dune on Bookbarn and tell me which shop sells it.', followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [1] "Title, author or ISBN" empty. First type "Dune" into [1] (input_text); if the task gives nothing for it, press [2] again to send the form as it is.',
    );
  });
});

describe('an option another option of its list fits the task better (a model that follows the schemas)', () => {
  it('is held once with the option that holds the word, and chosen when chosen again', async () => {
    await page.goto('http://site.test/home-city');
    const mexico: Call = { tool: 'select_option', args: { index: 1, value: 'Zaragoza, Puebla, Mexico' } };
    const { requests } = await run([[mexico], [mexico], [done]], 8, { followsSchemas: true, prompt: 'Make Zaragoza in Spain my home city.' });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not chosen: the task names "Spain", which "Zaragoza, Aragon, Spain" has and "Zaragoza, Puebla, Mexico" has not. Choose "Zaragoza, Aragon, Spain" instead; if "Zaragoza, Puebla, Mexico" is what the task means, choose it again.',
    );
    expect(lastObservation(requests[1])).toMatch(/^\[1\] select "Home city" value="Choose"/m);
    expect(lastObservation(requests[2])).toMatch(/^\[1\] select "Home city" value="Zaragoza, Puebla, Mexico"/m);
  });
});

describe('a toggle neither the task nor the words name (a model that follows the schemas)', () => {
  it('is held once with the one the task names, left out of the next answer, and pressed when asked later', async () => {
    await page.goto('http://site.test/privacy');
    const prompt = 'Turn off personalised ads. Do not change anything else.';
    const other: Call = { tool: 'click_element', args: { index: 2 }, says: 'It is still on, so I click it again.' };
    const { requests, tools } = await run([[other], [{ tool: 'wait', args: { seconds: 0 } }], [other], [done]], 8, { prompt, followsSchemas: true });
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed: the task names [1] checkbox "Personalised ads" (checked now), not [2] checkbox "Face grouping": pressing [2] changes what the task does not name. If [1] is as the task wants, go on (press [3] "Save preferences"); if the task needs [2] changed too, press it in a later step.',
    );
    expect(pressable(1)).not.toContain(2);
    expect(pressable(2)).toContain(2);
    expect(toolAnswers(requests[3]).at(-1)).toBe('Clicked [2] checkbox "Face grouping"');
  });
});

describe('a radio the task names (a model that follows the schemas)', () => {
  it('is said chosen with the button that sends it, and a press of another radio is held while it stays chosen', async () => {
    await page.goto('http://site.test/plans');
    const basic: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests, tools } = await run([[{ tool: 'click_element', args: { index: 2 } }], [basic], [{ tool: 'wait', args: { seconds: 0 } }], [basic], [{ tool: 'click_element', args: { index: 4 } }], [done]], 8, { prompt: 'Choose the Standard plan and press Submit.', followsSchemas: true });
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(lastObservation(requests[1])).toContain('Note: [2] radio "Standard" is now chosen, as the task asks; pressing another radio would undo that. If nothing else is asked, press [4] "Submit" next.');
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not pressed: the task names [2] radio "Standard" (checked now), not [1] radio "Basic": pressing [1] changes what the task does not name. If [2] is as the task wants, go on (press [4] "Submit"); if the task needs [1] changed too, press it in a later step.',
    );
    // the other radios of the group are not offered at the next answer
    expect(pressable(2)).not.toContain(1);
    expect(pressable(2)).not.toContain(3);
    // pressed again while Standard stays chosen: held once more
    expect(toolAnswers(requests[4]).at(-1)).toMatch(/^Not pressed: the task names \[2\] radio "Standard" \(checked now\)/);
    expect(lastObservation(requests[5])).toContain('URL: http://site.test/sent?plan=standard');
  });
});

describe('a toggle the task says which way to set', () => {
  it('is said set with the button that saves it, and a press that would set it back is held once (a model that follows the schemas)', async () => {
    await page.goto('http://site.test/privacy');
    const ads: Call = { tool: 'click_element', args: { index: 1 }, says: 'It is unchecked, so I click it to turn it off.' };
    const { requests } = await run([[ads], [ads], [{ tool: 'wait', args: { seconds: 0 } }], [ads], [done]], 8, { prompt: 'Turn off personalised ads.', followsSchemas: true });
    expect(lastObservation(requests[1])).toContain('Note: [1] checkbox "Personalised ads" is now off (unchecked), as the task asks; pressing it again would undo that. Press [3] "Save preferences" to save it.');
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not pressed: it is already as the task asks: [1] checkbox "Personalised ads" is off (unchecked), and pressing it would set it back. Press [3] "Save preferences" to save it; if it must be pressed anyway, press [1] again.',
    );
    expect(lastObservation(requests[2])).toMatch(/^\[1\] checkbox "Personalised ads"$/m);
    // asked again later: pressed
    expect(toolAnswers(requests[4]).at(-1)).toBe('Clicked [1] checkbox "Personalised ads"');
  });

  it('is said sent with the form, and a leave of the page the form opened is held once (a model that follows the schemas), then made', async () => {
    await page.goto('http://site.test/settings');
    const back: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[{ tool: 'click_element', args: { index: 1 } }], [{ tool: 'click_element', args: { index: 3 } }], [back], [back], [done]], 8, { prompt: 'Turn off personalised ads.', followsSchemas: true });
    expect(lastObservation(requests[2])).toContain('Note: the form you filled was sent with "Personalised ads" off (unchecked), as the task asks, and a new page opened: if the task asks for nothing more, call done.');
    expect(toolAnswers(requests[3]).at(-1)).toBe(
      'Not done: the form was sent with "Personalised ads" off (unchecked), as the task asks, and this page is what it opened: the form needs nothing more. If the task asks for nothing more, call done; to leave anyway, press [1] again.',
    );
    expect(toolAnswers(requests[4]).at(-1)).toMatch(/^Clicked \[1\] link "Back to privacy settings"/);
  });

  it('is not left before the fields the task gives values for are typed: a link press held once, then made', async () => {
    await page.goto('http://site.test/ring-back-home');
    const prompt = "Ask us to ring me back. I'm Tom Baker and my number is 07700 900123.";
    const leave: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[leave], [leave], [done]], 8, { prompt, followsSchemas: true });
    expect(lastObservation(requests[0])).toContain('Note: the task gives what these fields take: type "Tom Baker" into [2] and type "07700 900123" into [3].');
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not pressed yet: the task gives what this page\'s fields take: type "Tom Baker" into [2] and type "07700 900123" into [3]; [1] is a link that leaves them. Do that first, then send the form; to follow the link anyway, press [1] again.');
    // pressed again: made
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Clicked \[1\] link "Catalogue"/);
    expect(page.url()).toBe('http://site.test/results');
  });

  it('stays while its page stays: a question for a value typed and sent is told so, then a go_back is held', async () => {
    await page.goto('http://site.test/callback');
    const prompt = 'Ask for a callback to the phone number 555-0100.';
    const ask: Call = { tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Please enter your phone number 555-0100 to complete the call request.' } };
    const { requests } = await run([[{ tool: 'input_text', args: { index: 1, text: '555-0100' } }, { tool: 'click_element', args: { index: 2 } }], [ask], [{ tool: 'go_back', args: {} }], [done]], 8, { prompt, followsSchemas: true });
    expect(closingLines(requests[1])).toContain('Note: the form you filled was sent and a new page opened: if the task asks for nothing more, call done.');
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not asked: the task gives it: "555-0100"; you typed it, and the form was sent already: this page is what it opened; if the task asks for nothing more, call done\. /);
    expect(toolAnswers(requests[3]).at(-1)).toBe('Not done: the form was sent and this page is what it opened: the form needs nothing more. If the task asks for nothing more, call done; to leave anyway, call go_back again.');
    expect(page.url()).toBe('http://site.test/sent?phone=555-0100');
  });

  it('is not said sent as asked when the form went with a toggle the other way, and the leave is not held', async () => {
    await page.goto('http://site.test/settings');
    const ads: Call = { tool: 'click_element', args: { index: 1 } };
    const save: Call = { tool: 'click_element', args: { index: 3 } };
    // (the first save is held for both boxes unticked; the second sends the form as it is)
    const { requests } = await run([[ads], [ads], [save], [save], [{ tool: 'click_element', args: { index: 1 } }], [done]], 8, { prompt: 'Turn on personalised ads and face grouping.', followsSchemas: true });
    expect(toolAnswers(requests[3]).at(-1)).toBe(
      'Not pressed yet: this would send the form with [1] "Personalised ads" unticked while the task asks for it, and [2] "Face grouping" unticked while the task asks for it. First tick [1], tick [2] (click_element); if they are as the task wants, press [3] again to send the form as it is.',
    );
    expect(lastObservation(requests[4])).toContain('Note: the form you filled was sent and a new page opened');
    expect(toolAnswers(requests[5]).at(-1)).toMatch(/^Clicked \[1\] link "Back to privacy settings"/);
  });

  it('holds go_back once after any form sent (a model that follows the schemas), and goes back when asked again', async () => {
    await page.goto('http://site.test/form');
    const fill: Call[] = [{ tool: 'input_text', args: { index: 1, text: 'Ada' } }, { tool: 'input_text', args: { index: 2, text: 'ada@example.com' } }, { tool: 'click_element', args: { index: 3 } }];
    const back: Call = { tool: 'go_back', args: {} };
    const { requests } = await run([fill, [back], [back], [done]], 8, { prompt: 'Sign up as Ada, ada@example.com.', followsSchemas: true });
    expect(lastObservation(requests[1])).toContain('Note: the form you filled was sent and a new page opened');
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not done: the form was sent and this page is what it opened: the form needs nothing more. If the task asks for nothing more, call done; to leave anyway, call go_back again.');
    expect(lastObservation(requests[3])).toContain('URL: http://site.test/form');
  });

  it('once it is set as asked, holds a press of a toggle the task does not name a second time too, then presses it', async () => {
    await page.goto('http://site.test/privacy');
    const ads: Call = { tool: 'click_element', args: { index: 1 } };
    const faces: Call = { tool: 'click_element', args: { index: 2 }, says: 'It is unchecked, so I click it.' };
    const pause: Call = { tool: 'wait', args: { seconds: 0 } };
    const { requests } = await run([[ads], [faces], [pause], [faces], [pause], [faces], [done]], 10, { prompt: 'Turn off personalised ads.', followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not pressed: the task names \[1\] checkbox "Personalised ads" \(not checked now\), not \[2\]/);
    expect(toolAnswers(requests[4]).at(-1)).toMatch(/^Not pressed: the task names \[1\] checkbox "Personalised ads" \(not checked now\), not \[2\]/);
    expect(toolAnswers(requests[6]).at(-1)).toBe('Clicked [2] checkbox "Face grouping"');
  });
});

describe('a result that holds nothing', () => {
  const output = { outputType: 'structured_json' as const, outputSchema: { type: 'object', properties: { people: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, city: { type: 'string' } }, required: ['name', 'city'] } } }, required: ['people'] } };
  const prompt = 'List every person in the team directory with their name and city.';
  it('is answered once with the rows of the table the page shows, done still offered, and the filled result taken', async () => {
    await page.goto('http://site.test/team');
    const empty: Call = { tool: 'done', args: { result: { people: [] } } };
    const filled: Call = { tool: 'done', args: { result: { people: [{ name: 'Ada Lovelace', city: 'London' }, { name: 'Alan Turing', city: 'Manchester' }] } } };
    const { results, requests, tools } = await run([[empty], [filled]], 8, { prompt, output });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not accepted yet: your result holds nothing, and this page shows 3 lines of a table: "Name | Role | City", "Ada Lovelace | Engineer | London", "Alan Turing | Researcher | Manchester". Fill the result from its rows and call done with it; if the result is right empty, call done again.',
    );
    expect((tools[1] ?? []).map((t) => t.name)).toContain('done');
    expect(results.map((r) => r.kind)).toEqual(['continue', 'done']);
  });

  it('is taken when called again, and is not answered on a page without a table', async () => {
    await page.goto('http://site.test/team');
    const empty: Call = { tool: 'done', args: { result: { people: [] } } };
    expect((await run([[empty], [empty]], 8, { prompt, output })).results.map((r) => r.kind)).toEqual(['continue', 'done']);
    await page.goto('http://site.test/plan-prices');
    expect((await run([[empty]], 8, { prompt, output })).results.map((r) => r.kind)).toEqual(['done']);
  });
});

describe('an answer the agent states while the page shows it (a model that follows the schemas)', () => {
  const prompt = 'What time does the Riverside library open on Sundays?';
  const says = 'The Riverside library opens on Sundays from 13:00 to 17:00.';
  const away: Call = { tool: 'click_element', args: { index: 1 }, says };
  it('holds the press away from the page once, with the line, and takes the done then', async () => {
    await page.goto('http://site.test/hours');
    const { results, requests } = await run([[away], [{ tool: 'done', args: { message: 'From 13:00 to 17:00' } }]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not done yet: your own words answer the task: you wrote "The Riverside library opens on Sundays from 13:00 to 17:00.", and this page shows "Sunday | 13:00–17:00". If it does not answer the task, call the same action again; if it does, call done with the answer now.',
    );
    expect(page.url()).toBe('http://site.test/hours');
    expect(results.map((r) => r.kind)).toEqual(['continue', 'done']);
  });

  it('leaves the page\'s links out of the next answer after the hold, not only the one pressed', async () => {
    await page.goto('http://site.test/bike-ad');
    const prompt = "What's the phone number of the person selling this bike?";
    const away: Call = { tool: 'click_element', args: { index: 3 }, says: 'The phone number of the person selling the bike is 06 4817 2093.' };
    const { requests, tools } = await run([[{ tool: 'click_element', args: { index: 2 } }], [away], [{ tool: 'done', args: { message: '06 4817 2093' } }]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toMatch(/^Not done yet: your own words answer the task: .*this page shows "Phone: 06 4817 2093"/);
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')?.parameters as { properties: { index: { enum: unknown[] } } } | undefined)?.properties.index.enum.map(String) ?? [];
    const link = (v: string, i: number) => v === String(i) || v.endsWith(`[${i}]`);
    expect(pressable(1).some((v) => link(v, 1))).toBe(true);
    expect(pressable(2).some((v) => link(v, 1) || link(v, 3))).toBe(false);
  });

  it('holds again for another line of the page the words quote (another page of a list), not for the same one', async () => {
    await page.goto('http://site.test/gigs');
    const ask = 'When is Nina Okoro playing a jazz night?';
    const first: Call = { tool: 'click_element', args: { index: 1 }, says: "The page shows 'Sat 12 December – Jazz brunch with Nina Okoro'; I need to find when. I press 'Next page'." };
    const second: Call = { ...first, says: "The page shows 'Fri 8 January – Jazz night: Nina Okoro Trio'; I need to find when. I press 'Next page'." };
    const { requests } = await run([[first], [first], [second], [second], [done]], 8, { prompt: ask, followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not done yet: your own words answer the task: .*this page shows "Sat 12 December – Jazz brunch with Nina Okoro"/);
    expect(toolAnswers(requests[2]).at(-1)).toBe('Clicked [1] button "Next page"');
    expect(toolAnswers(requests[3]).at(-1)).toMatch(/^Not done yet: your own words answer the task: .*this page shows "Fri 8 January – Jazz night: Nina Okoro Trio"/);
    expect(toolAnswers(requests[4]).at(-1)).toBe('Clicked [1] button "Next page"');
  });

  it('does not hold the press of the link the task says to open, though the words quote a figure of the page', async () => {
    await page.goto('http://site.test/garden-store');
    const ask = 'Open the Shipping policy page and tell me within how many days returns are accepted. Answer with the number only.';
    const open: Call = { tool: 'click_element', args: { index: 1 }, says: "The page shows 'Orders ship within 2 days.'" };
    const { results, requests } = await run([[open], [{ tool: 'done', args: { message: '30' } }]], 8, { prompt: ask, followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe('Clicked [1] link "Shipping policy"; page is now http://site.test/garden-shipping');
    expect(lastObservation(requests[1])).toContain('Returns are accepted within 30 days.');
    expect(results.map((r) => r.kind)).toEqual(['continue', 'done']);
  });

  it('leaves the held press out of the next answer, then offers it again', async () => {
    await page.goto('http://site.test/hours');
    const wait: Call = { tool: 'wait', args: { seconds: 1 } };
    const { tools } = await run([[away], [wait], [away], [done]], 8, { prompt, followsSchemas: true });
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(pressable(0)).toEqual([1]);
    expect(pressable(1)).toEqual([]);
    expect(pressable(2)).toEqual([1]);
    // held once: the second press leaves the page
    expect(page.url()).toBe('http://site.test/results');
  });

  it('holds a press away once when the words name the cheapest line the page shows', async () => {
    await page.goto('http://site.test/garden');
    const cheapest = 'Which product in the Garden category is the cheapest? Answer with its name only.';
    const leave: Call = { tool: 'click_element', args: { index: 1 }, says: 'The cheapest product is Trowel, which costs $7.' };
    const { results, requests } = await run([[leave], [{ tool: 'done', args: { message: 'Trowel' } }]], 8, { prompt: cheapest, followsSchemas: true });
    expect(lastObservation(requests[0])).toContain('the lowest is on the line "Trowel: $7"');
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not done yet: your own words answer the task: you wrote "The cheapest product is Trowel, which costs $7.", and this page shows "Trowel: $7", the lowest price of the page. If it does not answer the task, call the same action again; if it does, call done with the answer now.',
    );
    expect(page.url()).toBe('http://site.test/garden');
    expect(results.map((r) => r.kind)).toEqual(['continue', 'done']);
  });

  it('holds once a press of another link of the name the cheapest line\'s note said to press', async () => {
    await page.goto('http://site.test/stays');
    const prompt = 'Find the cheapest place to stay and tell me its name.';
    const other: Call = { tool: 'click_element', args: { index: 3 } };
    const { requests } = await run([[other], [other], [done]], 8, { prompt, followsSchemas: true });
    expect(lastObservation(requests[0])).toContain('Press [2] link "See availability" to open it.');
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not pressed: the note said to press [2] link "See availability"; [3] is another link of that name, on another line of the page. Press [2]; if [3] is what you meant, press [3] again.');
    // pressed again right after: made
    expect(page.url()).toBe('http://site.test/sent?stay=loft');
  });

  it('names the line of a one-word name that shows the figure asked', async () => {
    await page.goto('http://site.test/plan-prices');
    const { requests } = await run([[done]], 8, { prompt: 'Tell me the monthly price of the Gold plan. Answer with the price only.' });
    expect(lastObservation(requests[0])).toContain('Note: the task asks about "Gold"; this page shows "Gold plan: $42 per month". If that answers the task, call done with it.');
  });

  it('holds a leave once while the page shows the line the task asks about, then leaves', async () => {
    await page.goto('http://site.test/hours');
    const join: Call = { tool: 'click_element', args: { index: 1 }, says: 'I need to read the hours.' };
    const { requests } = await run([[join], [join], [done]], 8, { prompt, followsSchemas: true });
    expect(lastObservation(requests[0])).toContain('Note: the task asks about "sunday"');
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not done yet: this page shows "Sunday | 13:00–17:00", which the task asks about. If it does not answer the task, press [1] again; if it does, call done with it now.');
    expect(toolAnswers(requests[2]).at(-1)).toContain('Clicked [1] link "Join the library"');
  });

  it('does not take the note of a held leave, copied into the agent\'s words, for words of its own', async () => {
    await page.goto('http://site.test/hours');
    const join: Call = { tool: 'click_element', args: { index: 1 }, says: 'I need to read the hours.' };
    const echo: Call = { ...join, says: "This page shows 'Sunday 13:00–17:00', which the task asks about. If it does not answer the task, press [1] again; if it does, call done with it now." };
    const { requests } = await run([[join], [echo], [done]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not done yet: this page shows "Sunday | 13:00–17:00"/);
    expect(toolAnswers(requests[2]).at(-1)).toContain('Clicked [1] link "Join the library"');
  });

  it('leaves the held leave out of the next answer: the press, or the tool', async () => {
    await page.goto('http://site.test/hours');
    const join: Call = { tool: 'click_element', args: { index: 1 }, says: 'I need to read the hours.' };
    const pressed = await run([[join], [done]], 8, { prompt, followsSchemas: true });
    const pressable = (n: number) => ((pressed.tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect([pressable(0), pressable(1)]).toEqual([[1], []]);
    // a tool without an element (here switch_tab, to another tab) is left out whole
    const other = await context.newPage();
    await other.goto('http://site.test/results');
    await page.bringToFront();
    const hop: Call = { tool: 'switch_tab', args: { index: 1 }, says: 'I need to read the hours.' };
    const { tools, requests } = await run([[hop], [done]], 8, { prompt, followsSchemas: true });
    const offered = (n: number) => (tools[n] ?? []).filter((t) => (t.parameters as { not?: unknown }).not === undefined).map((t) => t.name);
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not done yet: this page shows "Sunday | 13:00–17:00", which the task asks about\. If it does not answer the task, call switch_tab again; if it does, call done with it now\.$/);
    expect([offered(0).includes('switch_tab'), offered(1).includes('switch_tab')]).toEqual([true, false]);
    await other.close();
  });

  it('presses when asked again, and never holds for words the page does not show', async () => {
    await page.goto('http://site.test/hours');
    const again = await run([[away], [away], [done]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(again.requests[2]).at(-1)).toContain('Clicked [1] link "Join the library"');
    await page.goto('http://site.test/hours');
    // (not held as a stated answer; the page shows what the task asks about, so the leave is held for that)
    const guessed = await run([[{ ...away, says: 'It opens on Sundays at 10:30.' }], [done]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(guessed.requests[1]).at(-1)).toMatch(/^Not done yet: this page shows "Sunday | 13:00–17:00", which the task asks about/);
  });
});

describe('what the task asks about, in view', () => {
  it('is quoted after the page that shows it, and not on a page that does not', async () => {
    await page.goto('http://site.test/results');
    const next: Call = { tool: 'click_element', args: { index: 2 } };
    const { requests } = await run([[next], [{ tool: 'done', args: { message: '$149' } }]], 8, { prompt: 'Tell me the price of the Oak Rocking Chair.' });
    expect(lastObservation(requests[0])).not.toContain('Note: the task asks about');
    expect(closingLines(requests[1])).toContain('Note: the task asks about "Oak Rocking Chair"; this page shows "Oak Rocking Chair: $149". If that answers the task, call done with it.');
  });
});

describe('a task that compares prices, on a page to search first', () => {
  it('is told to search for the name it compares, until the field holds it', async () => {
    await page.goto('http://site.test/books');
    const type: Call = { tool: 'input_text', args: { index: 1, text: 'Dune' } };
    const { requests } = await run([[type], [{ tool: 'done', args: { message: 'none' } }]], 8, { prompt: 'Find the cheapest copy of Dune on Bookbarn.' });
    expect(lastObservation(requests[0])).toContain('Note: the task asks for the cheapest "Dune"; to compare them all, type "Dune" into [1] "Title, author or ISBN", then press [2] "Find books".');
    expect(lastObservation(requests[1])).not.toContain('to compare them all');
  });

  it('is told the page it opened from the line said cheapest is that line\'s own page', async () => {
    await page.goto('http://site.test/dune-results');
    const { requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [{ tool: 'done', args: { message: 'Paperback Rider' } }]], 8, { prompt: 'Find the cheapest copy of Dune and tell me which shop sells it.' });
    expect(lastObservation(requests[0])).toMatch(/Note: of the 2 prices on this page, the lowest is on the line ".*€4\.75"/);
    expect(lastObservation(requests[1])).toContain("Note: this page shows €4.75, the lowest price of the page before: it is the cheapest one's own page. If the task asks what this page shows, call done with it.");
  });

  it('holds a leave of the cheapest one\'s own page once (a model that follows the schemas)', async () => {
    await page.goto('http://site.test/dune-results');
    const back: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [back], [back], [done]], 8, { prompt: 'Find the cheapest copy of Dune and tell me which shop sells it.', followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not done yet: this page shows €4.75, the lowest price of the page before: it is the page of the one the task asks for. If the task asks for something else, press [1] again; if it asks what this page shows (its seller, its details), call done with it now.',
    );
    expect(toolAnswers(requests[3]).at(-1)).toMatch(/^Clicked \[1\] link "Back to results"/);
  });

  it('is not told a search it sent is a form sent that may end the task', async () => {
    await page.goto('http://site.test/books');
    const search: Call[] = [{ tool: 'input_text', args: { index: 1, text: 'Dune' } }, { tool: 'click_element', args: { index: 2 } }];
    const { requests } = await run([search, [{ tool: 'done', args: { message: 'none' } }]], 8, { prompt: 'Find the cheapest copy of Dune on Bookbarn.' });
    expect(lastObservation(requests[1])).toContain('URL: http://site.test/results?q=Dune');
    expect(lastObservation(requests[1])).not.toContain('the form you filled was sent');
  });
});

describe('a typing of a value where it does not belong (a model that follows the schemas)', () => {
  it('is held once with the field the task gives it for, or as a label of the page, and typed when typed again', async () => {
    await page.goto('http://site.test/ring-back');
    const label: Call = { tool: 'input_text', args: { index: 4, text: 'Search' } };
    const name: Call = { tool: 'input_text', args: { index: 4, text: 'Tom Baker' } };
    const prompt = "Ask us to ring me back. I'm Tom Baker and my number is 07700 900123.";
    const { requests } = await run([[label], [name], [name], [done]], 8, { prompt, followsSchemas: true });
    expect(lastObservation(requests[0])).toContain('[4] textbox "Search help articles" type=search');
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not typed: it is the label of [5] button "Search" on this page, not a value the task gives. Type what the task gives for [4] "Search help articles"; if "Search" is what it takes, type it again.');
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not typed: the task gives "Tom Baker" for [1] "Your name"; [4] is textbox "Search help articles". To type it there, call input_text with index 1; if [4] is what you meant, type into [4] again.');
    expect(toolAnswers(requests[3]).at(-1)).toMatch(/^Typed "Tom Baker" into \[4\]/);
    expect(await page.inputValue('input[name="q"]')).toBe('Tom Baker');
  });
});

describe('the empty fields the task gives values for', () => {
  it('are named with their values in the observation until they are filled', async () => {
    await page.goto('http://site.test/signin');
    const fill: Call = { tool: 'input_text', args: { index: 1, text: 'ada' } };
    const { requests } = await run([[fill], [done]], 8, { prompt: 'Sign in as ada, password Peach-Tree-77, and tell me what the page says.' });
    expect(lastObservation(requests[0])).toContain('Note: the task gives what this field takes: type "Peach-Tree-77" into [2].');
    await page.goto('http://site.test/callback');
    const typed = await run([[{ tool: 'input_text', args: { index: 1, text: '555-0100' } }], [done]], 8, { prompt: 'Ask for a callback to 555-0100.' });
    expect(lastObservation(typed.requests[0])).toContain('Note: the task gives what this field takes: type "555-0100" into [1].');
    expect(lastObservation(typed.requests[1])).not.toContain('the task gives what');
  });
});

describe('the line an extract read that the task names', () => {
  it('is quoted in the observation after it, and not in the one after that', async () => {
    await page.goto('http://site.test/ledger');
    const read: Call = { tool: 'extract', args: { query: 'Invoice #1055' } };
    const { requests } = await run([[read], [{ tool: 'wait', args: { seconds: 0.1 } }], [done]], 8, { prompt: 'What is the amount of invoice #1055?' });
    expect(lastObservation(requests[0])).not.toContain('Invoice #1055');
    expect(lastObservation(requests[1])).toContain('Note: the task asks about "#1055"; the text your extract read shows "Invoice #1055: €491.50". If that answers the task, call done with it.');
    expect(lastObservation(requests[2])).not.toContain('the text your extract read');
  });
});

describe('the day the task names, on a page of days', () => {
  it('is said not shown with the button that shows later ones, then named by its element once shown', async () => {
    await page.goto('http://site.test/strip');
    const { requests } = await run([[{ tool: 'click_element', args: { index: 1 } }], [done]], 8, { prompt: 'Book a table on 6 December.' });
    expect(lastObservation(requests[0])).toContain('Note: the task\'s date, 6 December, is not among the days shown (2 December 2026 to 4 December 2026): press [1] button "Later dates" to show later ones.');
    expect(lastObservation(requests[1])).toContain('Note: the task\'s date, 6 December, is [6] button "6 December 2026" on this page: press [6] to choose it.');
  });
});

describe('a press of a slot or day the task does not name (a model that follows the schemas)', () => {
  it('is held once with the task\'s own, left out of the next answer, and pressed when pressed later', async () => {
    await page.goto('http://site.test/slots');
    const early: Call = { tool: 'click_element', args: { index: 1 } };
    const { requests, tools } = await run([[early], [{ tool: 'click_element', args: { index: 2 } }], [early], [done]], 8, { followsSchemas: true, prompt: 'Book a table at 19:30.' });
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not pressed: the task asks for 19:30, which is [2] button "19:30"; [1] is "17:30". To choose 19:30, press [2]; if [1] is what you meant, press [1] again.');
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(pressable(1)).not.toContain(1);
    expect(toolAnswers(requests[2]).at(-1)).toBe('Clicked [2] button "19:30"');
    expect(toolAnswers(requests[3]).at(-1)).toBe('Clicked [1] button "17:30"');
    expect(await page.locator('#picked').textContent()).toBe('17:30');
  });

  it('holds a day of the strip with the button that shows the task\'s day', async () => {
    await page.goto('http://site.test/strip');
    const { requests } = await run([[{ tool: 'click_element', args: { index: 3 } }], [done]], 8, { followsSchemas: true, prompt: 'Book a table on 6 December.' });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not pressed: the task asks for another day than [3] "3 December 2026": the task\'s date, 6 December, is not among the days shown (2 December 2026 to 4 December 2026): press [1] button "Later dates" to show later ones. If [3] is what you meant, press [3] again.',
    );
  });
});

describe('a press a note of the observation tells to make', () => {
  it('is not held for the agent\'s words naming another element (a model that follows the schemas)', async () => {
    await page.goto('http://site.test/strip');
    const later: Call = { tool: 'click_element', args: { index: 1 }, says: "I click the '4 December 2026' button." };
    const { requests } = await run([[later], [done]], 8, { followsSchemas: true, prompt: 'Book a table on 6 December.' });
    expect(lastObservation(requests[0])).toContain('press [1] button "Later dates"');
    expect(toolAnswers(requests[1]).at(-1)).toBe('Clicked [1] button "Later dates"');
  });
});

describe('a done answered for a value never typed', () => {
  it('is answered once more when the field is filled after it and the form left unsent', async () => {
    await page.goto('http://site.test/callback');
    const finished: Call = { tool: 'done', args: { message: 'The task is already complete.' } };
    const { results, requests } = await run([[finished], [{ tool: 'input_text', args: { index: 1, text: '555-0100' } }], [finished], [finished]], 8, { prompt: 'Ask for a callback to the phone number 555-0100.' });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not accepted yet: the task gives "555-0100", which you have not typed/);
    expect(toolAnswers(requests[3]).at(-1)).toBe('Not accepted yet: you filled [1] but the form was not sent (its button [2] "Call me back" was not pressed). Press [2] to send it, or if the task is complete as it is, call done again.');
    expect(results.map((r) => r.kind)).toEqual(['continue', 'continue', 'continue', 'done']);
  });
});

describe('a done whose answer repeats the task', () => {
  it('is answered once, and accepted when repeated', async () => {
    await page.goto('http://site.test/results');
    const prompt = 'Until when is my membership valid? Log in with sam@example.com first.';
    const echo: Call = { tool: 'done', args: { message: 'Until when is my membership valid? Log in with sam@example.com first.' } };
    const { results, requests } = await run([[echo], [echo]], 8, { prompt });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      "Not accepted yet: your answer repeats the task's words. Answer with what the page shows that answers it (find it first if no page showed it); if the answer is right as it is, call done again.",
    );
    expect(results.map((r) => r.kind)).toEqual(['continue', 'done']);
  });

  it("is answered once when every word of it is the task's or its start's, in any order", async () => {
    await page.goto('http://site.test/results');
    const prompt = 'A reviewer called Helga K. was unhappy with the Pine Chair. What was her complaint?';
    const echo: Call = { tool: 'done', args: { message: 'The reviewer called Helga K. was unhappy with the Pine Chair. The browser is already on the starting page of the task: the observation shows it.' } };
    const { requests } = await run([[echo], [{ tool: 'done', args: { message: 'The reviewer Helga K. said the chair was unhappy with her back.' } }]], 8, { prompt });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not accepted yet: your answer repeats the task's words\./);
    // an answer with words of its own is taken
    expect(requests).toHaveLength(2);
  });

  it("is answered once when it is the prompt's line about the starting page, in a task that asks without a question mark", async () => {
    await page.goto('http://site.test/results');
    const echo: Call = { tool: 'done', args: { message: 'The browser is already on the starting page of the task. The observation shows it.' } };
    const { requests } = await run([[echo], [echo]], 8, { prompt: 'Tell me the price of the chair on the next page.' });
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Not accepted yet: your answer repeats the task's words\./);
    expect(requests).toHaveLength(2);
  });

  it('is answered with the line its own words quote from the page, done still offered (a model that follows the schemas)', async () => {
    await page.goto('http://site.test/results');
    const prompt = 'How much is the Pine Chair at this shop? Tell me the price.';
    const echo: Call = { tool: 'done', args: { message: prompt }, says: "The page shows 'Pine Chair: $89', which answers the task." };
    const { requests, tools } = await run([[echo], [{ tool: 'done', args: { message: '$89' } }]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not accepted yet: your answer repeats the task\'s words, and your own words say the page shows "Pine Chair: $89". Call done with the answer itself as its message (what the page shows that answers the task); if the answer is right as it is, call done again.',
    );
    expect((tools[1] ?? []).find((t) => t.name === 'done')!.parameters).not.toHaveProperty('not');
  });

  it('is accepted at once when it only names what the task names', async () => {
    await page.goto('http://site.test/results');
    const { results } = await run([[{ tool: 'done', args: { message: 'Your membership is valid until 14 April 2027.' } }]], 8, { prompt: 'Until when is my membership valid? Log in with sam@example.com first.' });
    expect(results.map((r) => r.kind)).toEqual(['done']);
  });
});

describe('a done whose answer gives an amount', () => {
  it('is answered once when no page of the task showed the amount, and accepted when repeated', async () => {
    await page.goto('http://site.test/results');
    const made: Call = { tool: 'done', args: { message: 'The Oak Rocking Chair costs $129.99' } };
    const { results, requests } = await run([[made], [made]]);
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not accepted yet: "129.99" is on no page you saw in this task. Answer with what a page shows: find it first (scroll, or open the page that holds it); if the answer is right as it is, call done again.');
    expect(results.at(-1)).toMatchObject({ kind: 'done' });
    expect(results).toHaveLength(2);
  });

  it('is answered once when the amount was only on the line of another item than the one it names', async () => {
    await page.goto('http://site.test/invoices');
    const wrong: Call = { tool: 'done', args: { message: 'The amount of invoice #1025 is €374.26.' } };
    const { results, requests } = await run([[wrong], [wrong]], 8, { prompt: 'What is the amount of invoice #1025?' });
    expect(toolAnswers(requests[1]).at(-1)).toBe(
      'Not accepted yet: "374.26" is on the line "Invoice #1002: €374.26", not on a line of "#1025". Find the line of #1025 first (scroll to load more, or open the page that holds it); if the answer is right as it is, call done again.',
    );
    expect(results.at(-1)).toMatchObject({ kind: 'done' });
  });

  it('is answered once when the amount is on another item\'s line, though the agent\'s words tied it to the item asked (a model that follows the schemas)', async () => {
    await page.goto('http://site.test/invoices');
    const prompt = 'What is the amount of invoice #1025?';
    const reload: Call = { tool: 'click_element', args: { index: 1 }, says: 'The page shows the amount of invoice #1025 as €374.26.' };
    const wrong: Call = { tool: 'done', args: { message: 'The amount of invoice #1025 is €374.26.' } };
    const { requests } = await run([[reload], [wrong], [wrong]], 8, { prompt, followsSchemas: true });
    // not held with "Invoice #1002: €374.26" quoted as if it answered
    expect(toolAnswers(requests[1]).at(-1)).toMatch(/^Clicked \[1\] link "Reload"/);
    expect(toolAnswers(requests[2]).at(-1)).toBe(
      'Not accepted yet: "374.26" is on the line "Invoice #1002: €374.26", not on a line of "#1025". Find the line of #1025 first (scroll to load more, or open the page that holds it); if the answer is right as it is, call done again.',
    );
  });

  it('is accepted at once when a page of the task showed it', async () => {
    await page.goto('http://site.test/results');
    const { results } = await run([[{ tool: 'click_element', args: { index: 2 } }], [{ tool: 'done', args: { message: 'Oak Rocking Chair: $149.00' } }]]);
    expect(results.map((r) => r.kind)).toEqual(['continue', 'done']);
  });
});

describe('a list of several pages, the task naming one', () => {
  const prompt = 'Who plays first on the second page of the gig list?';

  it('says on another page which page it is and what to press, and on the asked page that it is the one', async () => {
    await page.goto('http://site.test/gig-pages');
    const { requests } = await run([[{ tool: 'click_element', args: { index: 2 } }], [done]], 8, { prompt });
    expect(lastObservation(requests[0])).toContain('[1] button "1" current');
    expect(lastObservation(requests[0])).toContain('Note: the task asks about page 2 of the list; this is page 1: its lines are not the answer. Press [2] "2" to go to page 2.');
    expect(closingLines(requests[1])).toContain('Note: the list shows page 2, the page the task asks about.');
    expect(lastObservation(requests[1])).toContain('Rosa Diaz');
  });

  it('holds once a press of another page while the asked one is shown (a model that follows the schemas)', async () => {
    await page.goto('http://site.test/gig-pages');
    const third: Call = { tool: 'click_element', args: { index: 3 } };
    const { requests, tools } = await run([[{ tool: 'click_element', args: { index: 2 } }], [third], [{ tool: 'click_element', args: { index: 2 } }], [third], [done]], 8, { prompt, followsSchemas: true });
    expect(toolAnswers(requests[2]).at(-1)).toBe('Not pressed: the list shows page 2, the page the task asks about, and [3] "3" would show another. Answer from this page\'s lines (call done with what the task asks); to show another page anyway, press [3] again.');
    // the pager's controls away from page 2 are left out of the next answer; later, pressed again: made
    const pressable = (n: number) => ((tools[n] ?? []).find((t) => t.name === 'click_element')!.parameters.properties as Record<string, { enum?: number[] }>).index.enum;
    expect(pressable(2)).toEqual([2]);
    expect(lastObservation(requests[4])).toContain('Ivo Ruiz');
  });

  it('answers a done on another page once, and takes it when repeated', async () => {
    await page.goto('http://site.test/gig-pages');
    const { requests, results } = await run([[{ tool: 'done', args: { message: 'Ama Lee' } }], [{ tool: 'done', args: { message: 'Ama Lee' } }]], 8, { prompt });
    expect(toolAnswers(requests[1]).at(-1)).toBe('Not accepted yet: the task asks about page 2 of the list, and this is page 1. Press [2] "2" to go to page 2. If the answer is right as it is, call done again.');
    expect(results.at(-1)?.kind).toBe('done');
  });
});
