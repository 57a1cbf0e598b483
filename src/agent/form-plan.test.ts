import type { EmptyField } from './form-fields';
import { addressParts, formPlanNote, personName, planFields, planWords, taskDate, taskMessage, taskReference } from './form-plan';

const race = [
  'URL: http://127.0.0.1:4000/run/d-race/index.html',
  'Title: Sign up – Harbour 10K 2027',
  'Interactive elements:',
  '[1] textbox "First name" empty required',
  '[2] textbox "Last name" empty required',
  '[3] textbox "Date of birth" type=date empty required',
  '[4] textbox "E-mail" type=email empty required',
  '[5] combobox "T-shirt size" options="Choose a size | XS | S | M | L | XL" required',
  '[6] textbox "Running club (optional)" empty',
  '[7] button "Continue to payment"',
].join('\n');
const fields: EmptyField[] = [...[1, 2, 3, 4, 6].map((index) => ({ index, label: '', kind: 'text' as const })), { index: 5, label: 'T-shirt size', kind: 'choice' }];
const task = 'Enter me for the Harbour 10K: Ana Silva, born 12 March 1990, ana.silva@example.com, T-shirt size M.';

describe('the values a task gives for the empty fields of a form', () => {
  it('matches each field by what it is, and leaves a field the task says nothing for', () => {
    const plan = planFields(task, race, fields);
    expect(plan).toEqual([
      { index: 1, value: 'Ana', tool: 'input_text' },
      { index: 2, value: 'Silva', tool: 'input_text' },
      { index: 3, value: '1990-03-12', tool: 'input_text' },
      { index: 4, value: 'ana.silva@example.com', tool: 'input_text' },
      { index: 5, value: 'M', tool: 'select_option' },
    ]);
    expect(planWords(plan)).toBe('type "Ana" into [1], type "Silva" into [2], type "1990-03-12" into [3], type "ana.silva@example.com" into [4] and choose "M" in [5]');
  });

  it('chooses the one option of a list the task means when it names none', () => {
    const support = ['Title: Help – Parcelly', '[5] select "What is it about?" value="Choose a topic" options="Choose a topic | My parcel is late | My parcel arrived damaged | My parcel is lost | Something else"'].join('\n');
    const topic: EmptyField[] = [{ index: 5, label: 'What is it about?', kind: 'choice' }];
    expect(planFields('My parcel came with the box crushed and the vase inside broken. Let their support know.', support, topic)).toEqual([{ index: 5, value: 'My parcel arrived damaged', tool: 'select_option' }]);
    expect(planFields('My parcel is lost. Let their support know.', support, topic)).toEqual([{ index: 5, value: 'My parcel is lost', tool: 'select_option' }]);
    expect(planFields('Let their support know I am unhappy.', support, topic)).toEqual([]);
  });

  it("gives a journey's places to its From and To fields, and a library card's secret to its card number", () => {
    const rail = ['Title: Railhop', '[1] combobox "From" empty collapsed', '[2] combobox "To" empty collapsed', '[3] select "Leaving" value="Now" options="Now | Tomorrow morning | Tomorrow evening"'].join('\n');
    const two = [1, 2].map((index) => ({ index, label: '', kind: 'text' as const }));
    expect(planFields("Show me tomorrow morning's trains from Leeds to York on Railhop.", rail, two)).toEqual([
      { index: 1, value: 'Leeds', tool: 'input_text' },
      { index: 2, value: 'York', tool: 'input_text' },
    ]);
    expect(planFields('Fly me from New York to Stratford upon Avon.', rail, two).map((p) => p.value)).toEqual(['New York', 'Stratford upon Avon']);
    expect(planFields('Show me the trains to York.', rail, two)).toEqual([]);
    const library = ['Title: Sign in', '[2] textbox "Library card number" empty', '[3] textbox "PIN" type=password empty'].join('\n');
    const fields = [2, 3].map((index) => ({ index, label: '', kind: 'text' as const }));
    expect(planFields('When is my book due? My card number and PIN are in your secrets.', library, fields, [{ name: 'card_number' }, { name: 'pin' }])).toEqual([
      { index: 2, value: '<secret>card_number</secret>', tool: 'input_text' },
      { index: 3, value: '<secret>pin</secret>', tool: 'input_text' },
    ]);
  });

  it("gives a message field what the task quotes as the message, or its sentences that say something rather than tell what to do", () => {
    expect(taskMessage('Fill in the contact form with the name "Ada Lovelace", the email "ada@example.com" and the message "Please send my invoice", then send it.')).toBe('Please send my invoice');
    const parcel = 'My Parcelly parcel PY 4410 2291 came with the box crushed and the vase inside broken. Let their support know; my e-mail is jo.reid@example.com.';
    expect(taskMessage(parcel)).toBe('My Parcelly parcel PY 4410 2291 came with the box crushed and the vase inside broken.');
    const form = ['Title: Help – Parcelly', '[6] textbox "Tracking number" empty', '[7] textbox "Your message" empty', '[8] textbox "Your e-mail" type=email empty'].join('\n');
    expect(planFields(parcel, form, [6, 7, 8].map((index) => ({ index, label: '', kind: 'text' as const })))).toEqual([
      { index: 6, value: 'PY 4410 2291', tool: 'input_text' },
      { index: 7, value: 'My Parcelly parcel PY 4410 2291 came with the box crushed and the vase inside broken.', tool: 'input_text' },
      { index: 8, value: 'jo.reid@example.com', tool: 'input_text' },
    ]);
    // only what to do, a name and a number, or a question: nothing to say
    expect(taskMessage("Ask Greenleaf Energy to ring me back. I'm Tom Baker and my number is 07700 900123.")).toBeUndefined();
    expect(taskMessage('Send the form.')).toBeUndefined();
    expect(taskMessage('What is the price of the Blue Kettle?')).toBeUndefined();
  });

  it('takes no opening verb for a part of the name ("Type Alan Turing into …")', () => {
    expect(personName('Type Alan Turing into the "Full name" field and click the blue Submit button.', 'Title: Send a request')).toBe('Alan Turing');
  });

  it('gives no option the task says no to', () => {
    const ferry = ['Title: Island Ferries', '[4] select "Vehicle" value="No vehicle (foot passengers)" options="No vehicle (foot passengers) | Car | Bicycle"'].join('\n');
    const vehicle = [{ index: 4, label: '', kind: 'choice' as const }];
    expect(planFields('Book the ferry for two adults. We are on foot, no car.', ferry, vehicle)).toEqual([]);
    expect(planFields('Book the ferry for two adults without a car.', ferry, vehicle)).toEqual([]);
    expect(planFields('Book the ferry for two adults and a car.', ferry, vehicle)).toEqual([{ index: 4, value: 'Car', tool: 'select_option' }]);
    // a select on another option is not told to change to it
    expect(formPlanNote('Book the ferry for two adults. We are on foot, no car.', ferry)).toBeUndefined();
    expect(formPlanNote('Book the ferry for two adults and a car.', ferry)).toBe('Note: the task gives what this field takes: choose "Car" in [4].');
  });

  it('gives a full name and a phone number to the fields that take them', () => {
    const page = ['Title: Greenleaf Energy – Contact us', '[5] textbox "Your name" empty required', '[6] textbox "Phone number" type=tel empty required'].join('\n');
    const two = [5, 6].map((index) => ({ index, label: '', kind: 'text' as const }));
    expect(planFields("Ask Greenleaf Energy to ring me back. I'm Tom Baker and my number is 07700 900123.", page, two)).toEqual([
      { index: 5, value: 'Tom Baker', tool: 'input_text' },
      { index: 6, value: '07700 900123', tool: 'input_text' },
    ]);
  });

  it('gives the password the task spells out to a password field, and the e-mail address to the one before it', () => {
    const login = ['Title: Member login – Pulse Fitness', '[2] textbox "E-mail address" type=email empty', '[3] textbox "Password" type=password empty', '[4] button "Log in"'].join('\n');
    const two = [2, 3].map((index) => ({ index, label: '', kind: 'text' as const }));
    const plan = planFields('Until when is my Pulse Fitness membership valid? Log in with sam@example.com, password Peach-Tree-77.', login, two);
    expect(planWords(plan)).toBe('type "sam@example.com" into [2] and type "Peach-Tree-77" into [3]');
    expect(planFields('Log in with sam@example.com and tell me my plan.', login, two)).toEqual([{ index: 2, value: 'sam@example.com', tool: 'input_text' }]);
  });

  it('gives a login\'s fields the one secret of each kind the task has, by their names', () => {
    const login = ['Title: Sign in', '[1] textbox "Username" empty', '[2] textbox "Password" type=password empty', '[3] textbox "One-time code" empty', '[4] button "Sign in"'].join('\n');
    const three = [1, 2, 3].map((index) => ({ index, label: '', kind: 'text' as const }));
    const task = 'Sign in with the username and password from your secrets, then change the city to Lyon.';
    const secrets = [{ name: 'username' }, { name: 'password' }, { name: 'bank_otp', oneTimeCode: true as const }];
    expect(planWords(planFields(task, login, three, secrets))).toBe('type "<secret>username</secret>" into [1], type "<secret>password</secret>" into [2] and type "<secret>bank_otp</secret>" into [3]');
    // an e-mail field takes a user secret; a password the task spells out comes first; two secrets of a kind, none
    const mail = login.replace('"Username" empty', '"E-mail" type=email empty');
    expect(planFields('Log in, password Peach-Tree-77.', mail, three, [{ name: 'login_email' }, { name: 'password' }])).toEqual([
      { index: 1, value: '<secret>login_email</secret>', tool: 'input_text' },
      { index: 2, value: 'Peach-Tree-77', tool: 'input_text' },
    ]);
    expect(planFields(task, login, three, [{ name: 'work_user' }, { name: 'home_user' }])).toEqual([]);
    expect(planFields(task, login, three)).toEqual([]);
  });

  it('reads dates and names, not the site’s own name or a short option the task does not put after the label', () => {
    expect(taskDate('born 12 March 1990')).toBe('1990-03-12');
    expect(taskDate('on March 3rd, 2026')).toBe('2026-03-03');
    expect(taskDate('due 2027-04-14')).toBe('2027-04-14');
    expect(taskDate('next Friday')).toBeUndefined();
    expect(personName(task, race)).toBe('Ana Silva');
    expect(personName('Ask Greenleaf Energy to call me.', 'Title: Greenleaf Energy – Contact us')).toBeUndefined();
    expect(planFields('Enter Ana Silva for the 10K, size large please.', race, [{ index: 5, label: 'T-shirt size', kind: 'choice' }])).toEqual([]);
    expect(planFields('Sign me up for the 10K.', race, fields)).toEqual([]);
  });
});

describe('the note of what the task gives for a page\'s empty fields', () => {
  const task = 'Sign up for the Harbour 10K: Ana Silva, born 12 March 1990, ana.silva@example.com, T-shirt size M.';
  const page = race.replace('[5] combobox "T-shirt size" options=', '[5] select "T-shirt size" value="Choose a size" options=');
  it('names each field the task gives a value for, selects on no choice included', () => {
    expect(formPlanNote(task, page)).toBe(
      'Note: the task gives what these fields take: type "Ana" into [1], type "Silva" into [2], type "1990-03-12" into [3], type "ana.silva@example.com" into [4] and choose "M" in [5].',
    );
    // filled fields and chosen selects drop out; nothing left, no note
    const filled = page.replace('"First name" empty', '"First name" value="Ana"').replace('value="Choose a size"', 'value="M"');
    expect(formPlanNote(task, filled)).toBe('Note: the task gives what these fields take: type "Silva" into [2], type "1990-03-12" into [3] and type "ana.silva@example.com" into [4].');
    const all = filled.replace('"Last name" empty', '"Last name" value="Silva"').replace('"Date of birth" type=date empty', '"Date of birth" type=date value="1990-03-12"').replace('"E-mail" type=email empty', '"E-mail" type=email value="ana.silva@example.com"');
    expect(formPlanNote(task, all)).toBeUndefined();
  });

  it('says nothing for an e-mail field alone (a newsletter box), a search field, or a task that gives nothing', () => {
    const newsletter = ['Title: Pulse Fitness', '[1] link "Member login"', '[2] textbox "Your e-mail for our newsletter" type=email empty', '[3] button "Subscribe"'].join('\n');
    expect(formPlanNote('Log in with sam@example.com and tell me my plan.', newsletter)).toBeUndefined();
    const callback = ['Title: Solar panels', '[3] textbox "Phone number" type=tel empty', '[4] button "Call me back"'].join('\n');
    expect(formPlanNote('Ask for a callback to 555-0100.', callback)).toBe('Note: the task gives what this field takes: type "555-0100" into [3].');
    const search = ['Title: Bookbarn', '[1] textbox "Search the catalogue" empty', '[2] button "Find"'].join('\n');
    expect(formPlanNote('Find the cheapest copy of "Dune".', search)).toBeUndefined();
    expect(formPlanNote('Sign up for the race.', page)).toBeUndefined();
  });

  it('names a select on another option than the one the task names', () => {
    const booking = ['Title: Book a table', '[1] textbox "Date" type=date empty', '[2] select "Guests" value="2" options="1 | 2 | 3 | 4 | 5 | 6"', '[3] button "Book table"'].join('\n');
    const task = 'Book a table for 4 guests on 14 March 2026.';
    expect(formPlanNote(task, booking)).toBe('Note: the task gives what these fields take: type "2026-03-14" into [1] and choose "4" in [2].');
    const dated = booking.replace('type=date empty', 'type=date value="2026-03-14"');
    expect(formPlanNote(task, dated)).toBe('Note: the task gives what this field takes: choose "4" in [2].');
    // on the option named, or one the task does not name: nothing to say
    expect(formPlanNote(task, dated.replace('value="2"', 'value="4"'))).toBeUndefined();
    expect(formPlanNote('Book a table on 14 March 2026.', dated)).toBeUndefined();
    expect(formPlanNote('Book a table for 4 guests.', booking.replace('select "Guests"', 'select "Guests" disabled'))).toBeUndefined();
  });
});

describe('an address the task gives', () => {
  const dialog = ['Title: Your account – Freshbox', '[7] textbox "Street and number" value="4 Mill Lane" required', '[8] textbox "Town or city" value="Cork" required', '[9] textbox "Eircode" value="T23 K8C1" required', '[10] textbox "Delivery notes (optional)" empty', '[11] button "Save address"'].join('\n');
  const task = 'Change my Freshbox delivery address to 12 Quay Street, Cork T12 X4P2.';

  it('is read as a street, the town after it and a postcode', () => {
    expect(addressParts(task)).toEqual({ street: '12 Quay Street', town: 'Cork', postcode: 'T12 X4P2' });
    expect(addressParts('Send it to 221B Baker St, London NW1 6XE.')).toEqual({ street: '221B Baker St', town: 'London', postcode: 'NW1 6XE' });
    expect(addressParts('Ship to 10 Main Road, Springfield 62704.').postcode).toBe('62704');
    expect(addressParts('Tell me the price of the Gold plan.')).toEqual({});
    // a number alone is no postcode without a street
    expect(addressParts('Find a walk of 10000 steps.').postcode).toBeUndefined();
    expect(addressParts('Find shops near SW1A 1AA.').postcode).toBe('SW1A 1AA');
  });

  it('is planned into the fields that hold another value, the note saying so', () => {
    expect(formPlanNote(task, dialog)).toBe('Note: the task gives what these fields take: type "12 Quay Street" into [7] and type "T12 X4P2" into [9].');
    expect(formPlanNote(task, dialog.replace('4 Mill Lane', '12 Quay Street').replace('T23 K8C1', 'T12X4P2'))).toBeUndefined();
  });
});

describe("a parcel's, an order's or a booking's number", () => {
  it('is read from the task', () => {
    expect(taskReference('My Parcelly parcel PY 4410 2291 came with the box crushed. My e-mail is jo@example.com.')).toBe('PY 4410 2291');
    expect(taskReference('Ask about order 58213, it has not arrived.')).toBe('58213');
    expect(taskReference('Booking #A-10442 needs a late check-in.')).toBe('#A-10442');
    expect(taskReference('Tell them the vase arrived broken.')).toBeUndefined();
  });

  it('is planned into a field that asks for it, the message apart', () => {
    const form = ['Title: Support', '[1] select "Topic" options="Choose… | My parcel is late | My parcel arrived damaged"', '[2] textbox "Tracking number" empty', '[3] textbox "Your e-mail" type=email empty', '[4] textbox "Message" empty', '[5] button "Send"'].join('\n');
    const task = 'My Parcelly parcel PY 4410 2291 came with the box crushed and the vase inside broken. Let their support know; my e-mail is jo.reid@example.com.';
    expect(formPlanNote(task, form)).toBe(
      'Note: the task gives what these fields take: choose "My parcel arrived damaged" in [1], type "PY 4410 2291" into [2], type "jo.reid@example.com" into [3] and type "My Parcelly parcel PY 4410 2291 came with the box crushed and the vase inside broken." into [4].',
    );
  });
});
