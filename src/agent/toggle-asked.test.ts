import { askedToggleState, namedToggleSet, radioToChooseNote, sentLeaveNote, toggleBack, togglesNotNamed, togglesSetAsAsked, toggleSetNote } from './toggle-asked';

const privacy = (ads: string) =>
  [
    'URL: http://photos.test/privacy',
    'Interactive elements:',
    '[1] checkbox "Essential cookies" checked disabled',
    '[2] checkbox "Usage statistics" checked',
    `[3] checkbox "Personalised ads" ${ads}`,
    '[4] checkbox "Face grouping" unchecked',
    '[5] button "Save preferences"',
    '[6] link "Cancel"',
    'Visible text:',
    'Privacy settings',
  ].join('\n');
const task = "Turn off personalised ads in my Snapfolio privacy settings. Don't change anything else.";

describe('a toggle the task says which way to set', () => {
  it('reads the way from the task', () => {
    expect(askedToggleState(task)).toBe('unchecked');
    expect(askedToggleState('Switch the newsletter off')).toBe('unchecked');
    expect(askedToggleState('Please opt out of marketing e-mails')).toBe('unchecked');
    expect(askedToggleState('Turn on two-factor sign-in')).toBe('checked');
    expect(askedToggleState('Enable dark mode and save')).toBe('checked');
    expect(askedToggleState('Change my city to Lyon')).toBeUndefined();
    expect(askedToggleState('Turn off ads and turn on dark mode')).toBeUndefined();
  });

  it('says a radio the task names chosen, with the button that sends it', () => {
    const plans = (standard: string) => ['Interactive elements:', '[1] radio "Basic"', `[2] radio "Standard"${standard}`, '[3] radio "Premium"', '[4] button "Submit"'].join('\n');
    const choose = 'Choose the Standard plan and press Submit.';
    expect(toggleSetNote(choose, plans(' checked'), [2])).toBe('Note: [2] radio "Standard" is now chosen, as the task asks; pressing another radio would undo that. If nothing else is asked, press [4] "Submit" next.');
    // no button that sends it: the rest of the task, not its end (a size was left to choose)
    expect(toggleSetNote(choose, plans(' checked').replace('[4] button "Submit"', '[4] button "L"'), [2])).toBe(
      'Note: [2] radio "Standard" is now chosen, as the task asks; pressing another radio would undo that. Go on with the rest of the task.',
    );
    // no save button, but one of two words or more that shares words with the task: the default model,
    // Navy and L chosen and told to go on, waited, typed "Navy L" and pressed L again before "Add to bag"
    const jacket = ['Interactive elements:', '[1] link "Northcoast"', '[2] radio "Olive"', '[3] radio "Navy" checked', '[4] radio "Black"', '[5] button "S"', '[6] button "L" pressed', '[7] link "Size guide"', '[8] button "Add to bag"'].join('\n');
    const bag = 'Put the Harbor rain jacket in navy, size L, in my bag.';
    expect(toggleSetNote(bag, jacket, [3])).toBe('Note: [3] radio "Navy" is now chosen, as the task asks; pressing another radio would undo that. If nothing else is asked, press [8] "Add to bag" next.');
    // the size the task asks for not chosen yet (another note says so): no button named next
    expect(toggleSetNote(bag, jacket.replace('"L" pressed', '"L"'), [3], true)).toContain('Go on with the rest of the task.');
    // a button the task has no word of, two that share as many words, or the one sharing words pressed: none named
    expect(toggleSetNote(bag.replace('in my bag', 'for me'), jacket, [3])).toContain('Go on with the rest of the task.');
    expect(toggleSetNote(bag, jacket.replace('[7] link "Size guide"', '[7] button "Bag for later"'), [3])).toContain('Go on with the rest of the task.');
    expect(toggleSetNote(bag, jacket.replace('"Add to bag"', '"Add to bag" pressed'), [3])).toContain('Go on with the rest of the task.');
    // another radio pressed, the one named not chosen, or none named
    expect(toggleSetNote(choose, plans(' checked'), [1])).toBeUndefined();
    expect(toggleSetNote(choose, plans(''), [2])).toBeUndefined();
    expect(toggleSetNote('Choose a plan and press Submit.', plans(' checked'), [2])).toBeUndefined();
  });

  it('says once it is set that way, with the button that saves', () => {
    expect(toggleSetNote(task, privacy('unchecked'), [3])).toBe(
      'Note: [3] checkbox "Personalised ads" is now off (unchecked), as the task asks; pressing it again would undo that. Press [5] "Save preferences" to save it.',
    );
    // not acted on, not the way asked, or not named by the task
    expect(toggleSetNote(task, privacy('unchecked'), [2])).toBeUndefined();
    expect(toggleSetNote(task, privacy('checked'), [3])).toBeUndefined();
    expect(toggleSetNote('Turn off face grouping', privacy('unchecked'), [3])).toBeUndefined();
  });

  it('holds a press that would set it back, not one that sets it as asked', () => {
    expect(toggleBack(task, privacy('unchecked'), 3)).toBe(
      'Not pressed: it is already as the task asks: [3] checkbox "Personalised ads" is off (unchecked), and pressing it would set it back. Press [5] "Save preferences" to save it; if it must be pressed anyway, press [3] again.',
    );
    expect(toggleBack(task, privacy('checked'), 3)).toBeUndefined();
    expect(toggleBack(task, privacy('unchecked'), 4)).toBeUndefined();
    expect(toggleBack('Save my privacy settings', privacy('unchecked'), 3)).toBeUndefined();
  });
});

describe('the toggles around the one the task names', () => {
  it('says whether the named one is set as asked, and which the task does not name (not a disabled one)', () => {
    expect(namedToggleSet(task, privacy('unchecked'))).toBe(true);
    expect(namedToggleSet(task, privacy('checked'))).toBe(false);
    expect(namedToggleSet('Save my settings', privacy('unchecked'))).toBe(false);
    expect(togglesNotNamed(task, privacy('checked'))).toEqual([2, 4]);
  });
});

describe('the toggles of a form sent as the task asks', () => {
  const page = (ads: string, faces = '') => ['Interactive elements:', `[1] checkbox "Personalised ads"${ads}`, `[2] checkbox "Face grouping"${faces}`, '[3] button "Save preferences"', 'Visible text:', 'Privacy'].join('\n');
  it('are named when every toggle the task names is set the way it asks', () => {
    expect(togglesSetAsAsked('Turn off personalised ads.', page(''))).toBe('"Personalised ads" off (unchecked)');
    expect(togglesSetAsAsked('Turn on personalised ads and face grouping.', page(' checked', ' checked'))).toBe('"Personalised ads", "Face grouping" on (checked)');
  });

  it('are not named when one is not set as asked, or the task says no way to set them', () => {
    expect(togglesSetAsAsked('Turn off personalised ads.', page(' checked'))).toBeUndefined();
    expect(togglesSetAsAsked('Turn on personalised ads and face grouping.', page(' checked'))).toBeUndefined();
    expect(togglesSetAsAsked('Look at personalised ads.', page(''))).toBeUndefined();
  });

  it('hold a leave of the page the form opened: a link, go_back or navigate, not a press of a button or a done', () => {
    expect(sentLeaveNote('"Personalised ads" off (unchecked)', 'click_element', 'link', 1)).toMatch(/^Not done: the form was sent with "Personalised ads" off \(unchecked\), as the task asks.*press \[1\] again\.$/);
    expect(sentLeaveNote('"Personalised ads" off (unchecked)', 'go_back', undefined, undefined)).toMatch(/call go_back again\.$/);
    expect(sentLeaveNote('"Personalised ads" off (unchecked)', 'click_element', 'button', 2)).toBeUndefined();
    expect(sentLeaveNote('"Personalised ads" off (unchecked)', 'done', undefined, undefined)).toBeUndefined();
    // a form sent with no toggles the task names: go_back and navigate held, a link followed
    expect(sentLeaveNote('', 'navigate', undefined, undefined)).toBe('Not done: the form was sent and this page is what it opened: the form needs nothing more. If the task asks for nothing more, call done; to leave anyway, call navigate again.');
    expect(sentLeaveNote('', 'go_back', undefined, undefined)).toMatch(/^Not done: the form was sent and this page.*call go_back again\.$/);
    expect(sentLeaveNote('', 'click_element', 'link', 1)).toBeUndefined();
  });
});

describe('a radio the task names, not chosen', () => {
  const jacket = (olive: string, navy: string) => ['Interactive elements:', '[1] link "Northcoast"', `[2] radio "Olive"${olive}`, `[3] radio "Navy"${navy}`, '[4] radio "Black"', '[5] button "L" pressed', '[6] button "Add to bag"'].join('\n');
  const task = 'Put the Harbor rain jacket in navy, size L, in my bag.';

  it('is named with the radio chosen instead', () => {
    expect(radioToChooseNote(task, jacket(' checked', ''))).toBe('Note: the task asks for [3] radio "Navy": it is not chosen yet ([2] "Olive" is); press [3].');
    expect(radioToChooseNote(task, jacket('', ''))).toBe('Note: the task asks for [3] radio "Navy": it is not chosen yet; press [3].');
  });

  it('says nothing once it is chosen, when the task names none or two of the group, or names it in a clause that says no', () => {
    expect(radioToChooseNote(task, jacket('', ' checked'))).toBeUndefined();
    expect(radioToChooseNote('Put the rain jacket in my bag.', jacket(' checked', ''))).toBeUndefined();
    expect(radioToChooseNote('Put the jacket in navy or olive in my bag.', jacket(' checked', ''))).toBeUndefined();
    expect(radioToChooseNote('Put the jacket in my bag, not the navy one.', jacket(' checked', ''))).toBeUndefined();
  });
});
