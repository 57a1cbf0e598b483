import { misindexed, pressesNamed } from './index-check';

const observation = (...elements: string[]) => ['URL: http://site.test/ticket', 'Title: Support ticket', 'Tabs: [0] Support ticket (active)', 'Interactive elements:', ...elements, 'Visible text:', 'Support ticket #812', '(this is the whole page)'].join('\n');
const listOpen = observation('[1] combobox "Priority High" value="High" options="Low | Normal | High"', '[3] option "Low"', '[4] option "Normal"', '[5] option "High"', '[2] button "Save ticket"');

describe('a press of another element than the words name', () => {
  it('reads the presses the words say to make now, not those after "then"', () => {
    expect(pressesNamed("The priority is High, so we can directly click the 'Save ticket' button to save the ticket.")).toEqual(['Save ticket']);
    expect(pressesNamed('I will press "Log in" now.')).toEqual(['Log in']);
    expect(pressesNamed("I need to select 'High' from the priority combobox and then click the 'Save ticket' button.")).toEqual([]);
    expect(pressesNamed("Type the name, then press 'Next'. Finally click 'Place order'.")).toEqual([]);
  });

  it('is held with the index of the element named', () => {
    expect(misindexed("The page shows the current priority as High, so we can directly click the 'Save ticket' button to save the ticket.", listOpen, 4)).toEqual({
      meant: 2,
      note: 'Not pressed: you wrote that you press "Save ticket", which is [2]; [4] is option "Normal". To press "Save ticket", call click_element with index 2; if [4] is what you meant, press [4] again.',
    });
  });

  it('goes ahead when the index is the one named, the words name the pressed element too, name no single element, or name none', () => {
    expect(misindexed("Click the 'Save ticket' button.", listOpen, 2)).toBeUndefined();
    expect(misindexed("Option 'Normal' is wrong; I click the 'Save ticket' button.", listOpen, 4)).toBeUndefined();
    expect(misindexed("Click the 'Submit' button.", listOpen, 4)).toBeUndefined();
    expect(misindexed("Click 'Save ticket', or else click 'Low'.", listOpen, 4)).toBeUndefined();
    expect(misindexed('I open the list of priorities.', listOpen, 1)).toBeUndefined();
    expect(misindexed(undefined, listOpen, 4)).toBeUndefined();
    // two elements with that label: which one was meant cannot be said
    expect(misindexed("Click 'High'.", observation('[1] button "High"', '[2] option "High"', '[3] button "Save"'), 3)).toBeUndefined();
  });
});
