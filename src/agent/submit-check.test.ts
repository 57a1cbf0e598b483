import { heldNote, optionsNamed, unchosenFields, type ChoiceField } from './submit-check';

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

  it('is said with the empty fields in the note, with the tools that set them', () => {
    const unchosen = unchosenFields('Sign in and move to Lyon', [city]);
    expect(heldNote([{ index: 2, label: 'Password', kind: 'text' }], 3, unchosen)).toBe(
      'Not pressed yet: this would send the form with [2] "Password" empty, and [1] "City" on "Paris" while the task says "Lyon" ([11]). Fill them first with what the task gives (input_text or select_option); if the task gives nothing for them, press [3] again to send the form as it is.',
    );
  });
});
