import { askedToggleState, namedToggleSet, toggleBack, togglesNotNamed, toggleSetNote } from './toggle-asked';

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
