import { absentNamed, misindexed, mistypedInto, NO_PRESS_HELD, pressesNamed, pressNotMade, saveButton, taskRadio, twinOfAdvised, unnamedToggle } from './index-check';

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

  it('goes ahead with a toggle the task names, held when the task does not name it', () => {
    const signup = observation('[1] checkbox "Send me special offers"', '[2] checkbox "I accept the terms of service"', '[3] button "Continue"');
    const words = "The page shows the Create your account form. The user needs to click the 'Continue' button to proceed.";
    const task = 'Accept the terms of service (do not sign up for offers) and press Continue.';
    expect(misindexed(words, signup, 2, task)).toBeUndefined();
    expect(misindexed(words, signup, 1, task)?.meant).toBe(3);
    expect(misindexed(words, signup, 2, 'Press Continue.')?.meant).toBe(3);
    // already ticked, a press would untick it
    const ticked = observation('[1] checkbox "Send me special offers"', '[2] checkbox "I accept the terms of service" checked', '[3] button "Continue"');
    expect(misindexed(words, ticked, 2, task)?.meant).toBe(3);
  });
});

describe('a toggle neither the task nor the words name', () => {
  const settings = [
    'Interactive elements:',
    '[1] checkbox "Essential cookies" checked disabled',
    '[2] checkbox "Usage statistics" checked',
    '[3] checkbox "Personalised ads"',
    '[4] checkbox "Face grouping"',
    '[5] button "Save preferences"',
    'Visible text:',
    'Privacy settings',
  ].join('\n');
  const task = "Turn off personalised ads in my Snapfolio privacy settings. Don't change anything else.";

  it('is held with the one the task names and its state', () => {
    expect(unnamedToggle(task, 'I see that the checkbox is currently checked. I will click it again to turn it off.', settings, 4)).toBe(
      'Not pressed: the task names [3] checkbox "Personalised ads" (not checked now), not [4] checkbox "Face grouping": pressing [4] changes what the task does not name. If [3] is as the task wants, go on (press [5] "Save preferences"); if the task needs [4] changed too, press it in a later step.',
    );
  });

  it('is not held when the words or the task name it, for the named one, for a button, or when the task names none or several', () => {
    expect(unnamedToggle(task, 'I also turn off face grouping.', settings, 4)).toBeUndefined();
    expect(unnamedToggle(`${task} Turn off face grouping too.`, undefined, settings, 4)).toBeUndefined();
    expect(unnamedToggle(task, undefined, settings, 3)).toBeUndefined();
    expect(unnamedToggle(task, undefined, settings, 5)).toBeUndefined();
    expect(unnamedToggle('Save my privacy settings.', undefined, settings, 4)).toBeUndefined();
    expect(unnamedToggle('Turn off personalised ads and usage statistics.', undefined, settings, 4)).toBeUndefined();
  });

  it('holds a radio the task does not name while it names another by one word of its label', () => {
    const shipping = ['Interactive elements:', '[1] radio "Standard (5 days)"', '[2] radio "Express (1 day)" checked', '[3] button "Place order"'].join('\n');
    const checkout = 'Check out with the name Joan Clarke and Express shipping, and place the order.';
    expect(unnamedToggle(checkout, undefined, shipping, 1)).toBe(
      'Not pressed: the task names [2] radio "Express (1 day)" (checked now), not [1] radio "Standard (5 days)": pressing [1] changes what the task does not name. If [2] is as the task wants, go on (press [3] "Place order"); if the task needs [1] changed too, press it in a later step.',
    );
    expect(unnamedToggle(checkout, undefined, shipping, 2)).toBeUndefined();
    expect(unnamedToggle('Check out with Standard shipping.', undefined, shipping, 1)).toBeUndefined();
    // checkboxes keep the whole label; two radios named by a word each name none
    expect(unnamedToggle(checkout, undefined, shipping.replace(/radio/g, 'checkbox'), 1)).toBeUndefined();
    const plans = ['Interactive elements:', '[1] radio "Free"', '[2] radio "Express (1 day)"', '[3] radio "Express plus (same day)"'].join('\n');
    expect(unnamedToggle(checkout, undefined, plans, 1)).toBeUndefined();
    // a radio of another group (listed apart) is not held for the shipping the task names
    const payment = ['Interactive elements:', '[1] radio "Standard (5 days)"', '[2] radio "Express (1 day)" checked', '[3] textbox "Card holder"', '[4] radio "Card"', '[5] radio "Invoice"', '[6] button "Place order"'].join('\n');
    expect(unnamedToggle(checkout, undefined, payment, 5)).toBeUndefined();
    expect(unnamedToggle(checkout, undefined, payment, 1)).toMatch(/^Not pressed: the task names \[2\] radio "Express \(1 day\)"/);
  });

  it("finds the radio of the pressed one's group the task names, in full or by one word, with whether it is chosen", () => {
    const plans = ['Interactive elements:', '[1] radio "Basic"', '[2] radio "Standard" checked', '[3] radio "Premium"', '[4] button "Submit"'].join('\n');
    expect(taskRadio('Choose the Standard plan and press Submit.', plans, 1)).toEqual({ index: 2, label: 'Standard', checked: true });
    expect(taskRadio('Choose the Standard plan and press Submit.', plans.replace(' checked', ''), 3)).toEqual({ index: 2, label: 'Standard', checked: false });
    const shipping = ['Interactive elements:', '[1] radio "Standard (5 days)" checked', '[2] radio "Express (1 day)"', '[3] textbox "Card holder"', '[4] radio "Card"', '[5] radio "Invoice"'].join('\n');
    expect(taskRadio('Check out with Express shipping.', shipping, 1)).toEqual({ index: 2, label: 'Express (1 day)', checked: false });
    // none or two named, a radio of another group, or no radio pressed
    expect(taskRadio('Choose a plan.', plans, 1)).toBeUndefined();
    expect(taskRadio('Choose Standard, not Premium.', plans, 1)).toBeUndefined();
    expect(taskRadio('Check out with Express shipping.', shipping, 4)).toBeUndefined();
    expect(taskRadio('Choose the Standard plan and press Submit.', plans, 4)).toBeUndefined();
    expect(saveButton(plans)).toBe('[4] "Submit"');
  });

  it('holds a box the task names only in a clause that says no while a press would tick it, not while it would untick it', () => {
    const signup = ['Interactive elements:', '[1] checkbox "I accept the terms of service"', '[2] checkbox "Send me special offers"', '[3] button "Continue"'].join('\n');
    const task = 'Accept the terms of service (do not sign up for offers) and press Continue.';
    expect(unnamedToggle(task, 'The checkbox is not ticked, so it needs to be ticked first.', signup, 2)).toBe(
      'Not pressed: the task names [1] checkbox "I accept the terms of service" (not checked now), not [2] checkbox "Send me special offers": pressing [2] changes what the task does not name. If [1] is as the task wants, go on (press [3] "Continue"); if the task needs [2] changed too, press it in a later step.',
    );
    expect(unnamedToggle(task, undefined, signup.replace('offers"', 'offers" checked'), 2)).toBeUndefined();
    expect(unnamedToggle('Accept the terms of service and sign up for offers.', undefined, signup, 2)).toBeUndefined();
  });
});

describe('a press while the words name an element the page does not have', () => {
  const directory = ['URL: http://intranet.test/staff?page=2', 'Interactive elements:', '[1] link "Intranet"', '[2] link "1"', 'Visible text:', 'Name Department Extension', 'Ines Duarte Finance 2604', 'Jonas Berg Payroll 2615', 'Page 2 of 2: 1 2'].join('\n');
  it('is held with the line of the page that holds the name', () => {
    expect(absentNamed("I need the payroll person's extension. I will click on the 'Payroll' link to go to the payroll page.", directory, 1)).toBe(
      'Not pressed: no element of the page is named "Payroll"; [1] is link "Intranet". The page\'s text shows "Jonas Berg Payroll 2615": if [1] is what you meant, press [1] again; if that text answers the task, call done with it.',
    );
  });

  it('is not held when an element has the name, the words name the element pressed, or no line holds the name', () => {
    expect(absentNamed("I will click on the 'Intranet' link.", directory, 1)).toBeUndefined();
    expect(absentNamed("I will click the '1' link.", directory, 2)).toBeUndefined();
    expect(absentNamed("I will click on the 'Payroll' link, it is under Intranet.", directory, 1)).toBeUndefined();
    expect(absentNamed("I will click on the 'Legal' link.", directory, 1)).toBeUndefined();
    expect(absentNamed("I will click on the 'Next page' link.", directory.replace('[2] link "1"', '[2] link "Next page"'), 1)).toBeUndefined();
  });
});

describe('a typing into another field than the words name', () => {
  const form = ['Interactive elements:', '[1] textbox "Name" value="Ada Lovelace"', '[2] textbox "Email" type=email empty', '[3] textbox "Message" empty', '[4] button "Send"', 'Visible text:', 'Contact'].join('\n');
  it('is held with the field the words name', () => {
    expect(mistypedInto("I need to type 'Please send my invoice' into the message field.", form, 2)).toEqual({
      meant: 3,
      note: 'Not typed: you wrote that you type into "Message", which is [3]; [2] is textbox "Email". To type there, call input_text with index 3; if [2] is what you meant, type into [2] again.',
    });
    expect(mistypedInto('I will type it in the "Message" box.', form, 1)?.meant).toBe(3);
  });

  it('is not held for the field named, words that name no field or two, or a label no field has', () => {
    expect(mistypedInto("I need to type 'Please send my invoice' into the message field.", form, 3)).toBeUndefined();
    expect(mistypedInto('I will fill in the form.', form, 2)).toBeUndefined();
    expect(mistypedInto('Type into the name field, then into the message field.', form, 2)).toBeUndefined();
    expect(mistypedInto('I type it into the phone field.', form, 2)).toBeUndefined();
  });

  it('is held for the text the words quote, and not for another: the words speak of a later typing', () => {
    expect(mistypedInto("I need to type 'Please send my invoice' into the message field.", form, 2, 'Please send my invoice')?.meant).toBe(3);
    // the task's e-mail typed into "Email" while the words say what comes next
    const next = "The name is filled. The next step is to type 'Please send my invoice' into the message field and then click the 'Send' button.";
    expect(mistypedInto(next, form, 2, 'ada@example.com')).toBeUndefined();
    // a quoted label is no text of a typing
    expect(mistypedInto("I will type it into the 'Message' field.", form, 2, 'Please send my invoice')?.meant).toBe(3);
    expect(mistypedInto(next, form, 2)?.meant).toBe(3);
  });
});

describe('a tool that presses nothing while the words say to press an element', () => {
  const calendar = observation('[5] button "Continue"', '[6] button "Previous month"', '[7] button "Next month"', '[39] button "Friday 1 January 2027"');

  it('is held with the element the words name, by index or by name', () => {
    expect(pressNotMade("The page has changed, and the task is incomplete. Press [7] button 'Next month' to show later ones.", calendar, 'scroll')).toEqual({
      note: `${NO_PRESS_HELD} [7] button "Next month", and called scroll, which presses nothing. To press it, call click_element with index 7; if scroll is what you meant, call it again.`,
      meant: 7,
    });
    expect(pressNotMade("I will click the 'Next month' button.", calendar, 'wait')?.meant).toBe(7);
  });

  it('is not held for a press the words put later, an element the page lacks, several, or a tool that presses', () => {
    expect(pressNotMade('I will scroll down, then press [7].', calendar, 'scroll')).toBeUndefined();
    expect(pressNotMade('Press [8] to go on.', calendar, 'scroll')).toBeUndefined();
    expect(pressNotMade('Press [7] or press [6].', calendar, 'scroll')).toBeUndefined();
    expect(pressNotMade('Press [7] to show later ones.', calendar, 'click_element')).toBeUndefined();
    expect(pressNotMade('The calendar shows January; I scroll down to see more.', calendar, 'scroll')).toBeUndefined();
  });
});

describe('a press of another element of the name a note said to press', () => {
  const stays = ['Interactive elements:', '[1] link "Staybird"', '[2] link "See availability"', '[3] link "See availability"', '[4] button "See availability"'].join('\n');
  it('is held with the one the note named, and not when the note named none of that name', () => {
    expect(twinOfAdvised(new Set([3]), stays, 2)).toBe('Not pressed: the note said to press [3] link "See availability"; [2] is another link of that name, on another line of the page. Press [3]; if [2] is what you meant, press [2] again.');
    expect(twinOfAdvised(new Set([3]), stays, 3)).toBeUndefined();
    // another role, another label, or no note
    expect(twinOfAdvised(new Set([3]), stays, 4)).toBeUndefined();
    expect(twinOfAdvised(new Set([3]), stays, 1)).toBeUndefined();
    expect(twinOfAdvised(new Set(), stays, 2)).toBeUndefined();
  });
});
