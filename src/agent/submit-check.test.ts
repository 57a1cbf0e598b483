import { heldFormObjection, heldNote, mistypedFields, optionsNamed, pressOutsideForm, unchosenFields, untickedFields, valueSetFor, type ChoiceField, type TickField } from './submit-check';

const options = (...texts: string[]) => texts.map((text, i) => ({ text, index: 10 + i }));
const named = (task: string, ...texts: string[]) => optionsNamed(task, options(...texts)).map((o) => o.text);

describe('the options a task names', () => {
  it('finds an option by its whole text, at word bounds, whatever the case and punctuation', () => {
    expect(named('Change the city in your profile to Lyon.', 'Paris', 'Lyon', 'Marseille')).toEqual(['Lyon']);
    expect(named('Set the newsletter frequency to weekly and save', 'Daily', 'Weekly', 'Monthly')).toEqual(['Weekly']);
    expect(named('Fly to Lyonnais', 'Paris', 'Lyon')).toEqual([]);
  });

  it('finds an option by its words before what qualifies them, or by a first word that tells the options apart', () => {
    expect(named('Choose express delivery', 'Standard delivery (free)', 'Express delivery (2 days, $9)')).toEqual(['Express delivery (2 days, $9)']);
    expect(named('ship it express', 'Standard shipping – free', 'Express shipping – $9')).toEqual(['Express shipping – $9']);
    // "New" starts both: it tells nothing apart
    expect(named('a new order to New York', 'New York', 'New Delhi')).toEqual(['New York']);
    expect(named('a new order', 'New York', 'New Delhi')).toEqual([]);
  });

  it('takes no option the task says no to', () => {
    expect(named('Two adults on 9 March. We are on foot, no car.', 'No vehicle (foot passengers)', 'Car', 'Bicycle')).toEqual([]);
    expect(named('Two adults without a car, with a bicycle.', 'No vehicle (foot passengers)', 'Car', 'Bicycle')).toEqual(['Bicycle']);
  });

  it('takes no option of fewer than 3 letters', () => {
    expect(named('size M in blue', 'S', 'M', 'L')).toEqual([]);
  });
});

describe('the choices of a form not as the task says', () => {
  const city: ChoiceField = { index: 1, label: 'City', current: 'Paris', options: options('Paris', 'Lyon', 'Marseille') };

  it('is a choice on another option than the one the task names', () => {
    expect(unchosenFields('Change the city to Lyon', [city])).toEqual([{ index: 1, label: 'City', current: 'Paris', named: { text: 'Lyon', index: 11 } }]);
    expect(unchosenFields('Change the city to Lyon', [{ ...city, current: '' }])).toEqual([{ index: 1, label: 'City', current: '', named: { text: 'Lyon', index: 11 } }]);
  });

  it('is not a choice on the option named, one the task names nothing of, or one whose option it cannot tell', () => {
    expect(unchosenFields('Change the city to Lyon', [{ ...city, current: 'Lyon' }])).toEqual([]);
    expect(unchosenFields('Save the profile', [city])).toEqual([]);
    // the task names the option it is on too ("from Paris to Lyon"): it may be as the task wants
    expect(unchosenFields('Move the order from Paris to Lyon', [city])).toEqual([]);
    expect(unchosenFields('Lyon or Marseille, either', [{ ...city, current: 'Paris' }])).toEqual([]);
  });

  it('reads a short option by the word of the label next to it: "4 guests"', () => {
    const guests: ChoiceField = { index: 2, label: 'Guests', current: '2', options: options('1', '2', '3', '4', '5', '6') };
    expect(unchosenFields('Book a table for 4 guests on 14 March 2026.', [guests])).toEqual([{ index: 2, label: 'Guests', current: '2', named: { text: '4', index: 13 } }]);
    expect(unchosenFields('Book a table for guests: 4, on 14 March 2026.', [guests])).toEqual([{ index: 2, label: 'Guests', current: '2', named: { text: '4', index: 13 } }]);
    // on the number asked, or a number not said of guests: as the task may want
    expect(unchosenFields('Book a table for 2 guests on 14 March 2026.', [guests])).toEqual([]);
    expect(unchosenFields('Book a table on 14 March 2026 at 4 pm.', [guests])).toEqual([]);
  });

  it('is said with the empty fields in the note, with the tools that set them', () => {
    const unchosen = unchosenFields('Sign in and move to Lyon', [city]);
    expect(heldNote([{ index: 2, label: 'Password', kind: 'text' }], 3, unchosen)).toBe(
      'Not pressed yet: this would send the form with [2] "Password" empty, and [1] "City" on "Paris" while the task says "Lyon" ([11]). Fill them first with what the task gives (input_text or select_option); if the task gives nothing for them, press [3] again to send the form as it is.',
    );
  });
});

describe('the checkboxes of a form the task asks to tick', () => {
  const offers: TickField = { index: 1, label: 'Send me special offers', checked: false };
  const terms: TickField = { index: 2, label: 'I accept the terms of service', checked: false };
  const task = 'Accept the terms of service (do not sign up for offers) and press Continue.';

  it('is a box left unticked whose label the task names, in full or but for one word of two or more', () => {
    expect(untickedFields(task, [offers, terms])).toEqual([{ index: 2, label: 'I accept the terms of service', current: 'unticked', tick: true, named: { text: 'I accept the terms of service', index: 2 } }]);
    expect(untickedFields('Accept the terms and press Continue.', [terms]).map((f) => f.index)).toEqual([2]);
    expect(untickedFields('Sign in and keep me signed in', [{ index: 3, label: 'Keep me signed in', checked: false }]).map((f) => f.index)).toEqual([3]);
  });

  it('is no box ticked already, one the task says no to, one named by one word, or any when the task turns things off', () => {
    expect(untickedFields(task, [{ ...terms, checked: true }])).toEqual([]);
    expect(untickedFields('Do not accept the terms; press Continue.', [terms])).toEqual([]);
    expect(untickedFields("Don't send me special offers, then press Continue.", [offers])).toEqual([]);
    expect(untickedFields('Read the terms and press Continue.', [terms])).toEqual([]);
    expect(untickedFields('Turn off the special offers and accept the terms of service.', [terms])).toEqual([]);
  });

  it('is said with the press that ticks it', () => {
    expect(heldNote([], 3, untickedFields(task, [offers, terms]))).toBe(
      'Not pressed yet: this would send the form with [2] "I accept the terms of service" unticked while the task asks for it. First tick [2] (click_element); if it is as the task wants, press [3] again to send the form as it is.',
    );
    const held = { button: 3, empty: [], unchosen: untickedFields(task, [terms]) };
    expect(heldFormObjection(held)).toBe(
      'Not accepted yet: the form was not sent: your press of [3] was held because of [2] "I accept the terms of service" unticked while the task asks for it. First tick [2], then press [3]; if the task is complete as it is, call done again.',
    );
  });
});

describe('the fields of a held press spelled out', () => {
  const name = { index: 1, label: 'Your name', kind: 'text' as const };
  const cv = { index: 2, label: 'CV file', kind: 'file' as const };
  const file = { fileId: 'file_1a', name: 'cv-grace.txt', size: 120 };
  it('names the one file of the task for the one empty file field, with the one value for the one text field', () => {
    expect(heldNote([cv], 3, [], false, [], [file])).toBe(
      'Not pressed yet: this would send the form with [2] "CV file" empty. First put cv-grace.txt into [2] with fileIds ["file_1a"] (upload_file); if the task gives nothing for it, press [3] again to send the form as it is.',
    );
    expect(heldNote([name, cv], 3, [], false, ['Grace Hopper'], [file])).toMatch(/\. First type "Grace Hopper" into \[1\] and put cv-grace\.txt into \[2\] with fileIds \["file_1a"\] \(input_text or upload_file\);/);
  });

  it('asks for the option that fits the task when only lists to choose from are empty', () => {
    const topic = { index: 5, label: 'What is it about?', kind: 'choice' as const };
    expect(heldNote([topic], 9)).toBe(
      'Not pressed yet: this would send the form with [5] "What is it about?" empty. First choose in it the option that fits the task (select_option); if none fits, press [9] again to send the form as it is.',
    );
    expect(heldNote([topic, name], 9)).toMatch(/\. Fill them first with what the task gives \(select_option or input_text\);/);
  });

  it('says only "what the task gives" when a field has no one value or file', () => {
    expect(heldNote([name, cv], 3, [], false, [], [file])).toMatch(/\. Fill them first with what the task gives \(input_text or upload_file\);/);
    expect(heldNote([cv], 3, [], false, [], [file, { ...file, fileId: 'file_2b', name: 'letter.txt' }])).toMatch(/\. Fill it first with what the task gives \(upload_file\);/);
    expect(heldNote([cv], 3)).toMatch(/\. Fill it first with what the task gives \(upload_file\);/);
  });

  it('is said again at a done while the press stays held', () => {
    expect(heldFormObjection({ button: 3, empty: [cv], unchosen: [], files: [file] })).toBe(
      'Not accepted yet: the form was not sent: your press of [3] was held because [2] "CV file" was empty. First put cv-grace.txt into [2] with fileIds ["file_1a"], then press [3]; if the task is complete as it is, call done again.',
    );
  });
});

describe('a press of a button outside a form', () => {
  const observation = [
    'URL: http://desk.test/ticket',
    'Title: Support ticket',
    'Interactive elements:',
    '[1] combobox "Priority Normal" value="Normal" options="Low | Normal | High"',
    '[2] button "Save ticket"',
    '[3] link "Help"',
    'Visible text:',
    'Support ticket #812',
  ].join('\n');

  it('reads the choices the observation shows, with their value and options', () => {
    expect(pressOutsideForm(observation, 2)).toEqual({
      key: 'http://desk.test/ticket#button2',
      empty: [],
      filled: [],
      ticks: [],
      choices: [{ index: 1, label: 'Priority Normal', current: 'Normal', options: [{ text: 'Low', index: 1 }, { text: 'Normal', index: 1 }, { text: 'High', index: 1 }] }],
    });
    const form = pressOutsideForm(observation, 2)!;
    expect(heldNote([], 2, unchosenFields('Set the ticket priority to High and save it', form.choices), true)).toBe(
      'Not pressed yet: [1] "Priority Normal" on "Normal" while the task says "High" ([1]). First choose "High" in [1] (select_option); if it is as the task wants, press [2] again to go ahead as it is.',
    );
  });

  it('is nothing for an element that is no button, or a page without choices', () => {
    expect(pressOutsideForm(observation, 3)).toBeUndefined();
    expect(pressOutsideForm(observation.replace(/^\[1\].*$/m, ''), 2)).toBeUndefined();
  });
});

describe('the value a task sets a text field to', () => {
  it('is what follows "to" after a verb that changes and the field\'s label, in the same clause', () => {
    const signIn = 'Sign in with the username and password from your secrets, then change the city in the profile to Lyon and save the profile.';
    expect(valueSetFor(signIn, 'City')).toBe('Lyon');
    expect(valueSetFor('Set the quantity to 3 and add it to the cart', 'Quantity')).toBe('3');
    expect(valueSetFor('Update your email to ada@example.com, then save', 'Email address')).toBe('ada@example.com');
    expect(valueSetFor('Change the delivery date to 14/03/2026.', 'Delivery date')).toBe('14/03/2026');
    expect(valueSetFor('Change the name to "Ada Lovelace" and save', 'Name')).toBe('Ada Lovelace');
    expect(valueSetFor('Change the city to New York', 'City')).toBe('New York');
  });

  it('is none without a verb that changes, another field\'s label, or a value it cannot tell', () => {
    expect(valueSetFor('Send a message to Bob saying hello', 'Message')).toBeUndefined();
    expect(valueSetFor('Change the city to Lyon', 'Username')).toBeUndefined();
    expect(valueSetFor('Change the city to something nicer', 'City')).toBeUndefined();
  });

  it('makes a field holding another value a reason to hold the press, said with what it holds', () => {
    const task = 'Change the city in the profile to Lyon and save the profile';
    expect(mistypedFields(task, [{ index: 1, label: 'City', value: 'Paris' }])).toEqual([{ index: 1, label: 'City', current: 'Paris', typed: true, named: { text: 'Lyon', index: 1 } }]);
    expect(mistypedFields(task, [{ index: 1, label: 'City', value: 'lyon' }])).toEqual([]);
    expect(heldNote([], 2, mistypedFields(task, [{ index: 1, label: 'City', value: 'Paris' }]))).toBe(
      'Not pressed yet: this would send the form with [1] "City" holding "Paris" while the task says "Lyon". First type "Lyon" into [1] (input_text); if it is as the task wants, press [2] again to send the form as it is.',
    );
  });
});

describe('a done after a press held for fields not as the task says', () => {
  it('spells out what sets them, then the press', () => {
    const unchosen = mistypedFields('Change the city in the profile to Lyon and save the profile', [{ index: 1, label: 'City', value: 'Paris' }]);
    expect(heldFormObjection({ button: 2, empty: [], unchosen })).toBe(
      'Not accepted yet: the form was not sent: your press of [2] was held because of [1] "City" holding "Paris" while the task says "Lyon". First type "Lyon" into [1], then press [2]; if the task is complete as it is, call done again.',
    );
  });
});
