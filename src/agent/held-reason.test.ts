import { heldReason } from './act';

describe('the reason an action event gives for a held action', () => {
  it.each([
    ['click_element', 'Not done yet: your own words answer the task: you wrote …', 'the agent gave the answer the page shows'],
    ['request_human_input', 'Not asked: this page shows "Jonas Berg Payroll 2615".', 'the agent can do or read it itself'],
    ['navigate', 'Not opened yet: you filled [1]…', 'the form filled was not sent'],
    ['click_element', 'Not pressed yet: you filled [3] …, and [6] is a link that may leave the page and lose what you typed.', 'the form filled was not sent'],
    ['click_element', 'Not pressed again: you pressed [2] …', 'pressed at the step before, it would add again'],
    ['input_text', 'Not typed: [3] holds what you typed there already.', 'the field holds it already'],
    ['click_element', 'Not pressed: it only jumps to #breads of this page…', 'the page is shown whole already'],
    ['click_element', 'Not pressed: it is already as the task asks: …', 'it is already as the task asks'],
    ['click_element', 'Not pressed: you wrote that you press "Log in", which is [4]…', 'the agent named another element'],
    ['click_element', 'Not pressed: no element of the page is named "Payroll"…', 'the agent named another element'],
    ['click_element', 'Not pressed: the task names [3] checkbox …', 'the task names another element'],
    ['navigate', 'Not done: the form was sent with "Personalised ads" off (unchecked), …', 'the form was sent, and the page it opened needs nothing more'],
    ['go_back', 'Not done: the form was sent and this page is what it opened: …', 'the form was sent, and the page it opened needs nothing more'],
    ['select_option', 'Not chosen: the task names "Spain", …', 'another option fits the task better'],
    ['click_element', 'Not pressed: the task asks for 19:30, which is [2] button "19:30"; …', 'the task names another day or time'],
    ['click_element', 'Not done yet: this page shows "Valid until 14 April 2027", which the task asks about. …', 'the page shows what the task asks'],
    ['input_text', 'Not typed: the task gives "Tom Baker" for [5] "Your name"; …', 'the task gives it for another field'],
    ['input_text', 'Not typed: it is the label of [9] button "Search" on this page, …', 'it is a label of the page, not a value'],
    ['click_element', 'Not pressed: it would pay or buy: [1] button "Pay now", …', 'the task asks for no payment'],
    ['input_text', 'Not typed: you wrote that you type into "Message", …', 'the agent named another field'],
    ['click_element', 'Not pressed yet: this would send the form with [1] "Name" empty.', 'the form it sends has empty fields'],
  ])('%s, "%s": %s', (tool, note, reason) => {
    expect(heldReason(tool, note)).toBe(reason);
  });
});
