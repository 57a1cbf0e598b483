import { heldReason } from './act';

describe('the reason an action event gives for a held action', () => {
  it('is read from the tool and the opening words of the note', () => {
    expect(heldReason('click_element', 'Not done yet: your own words answer the task: you wrote …')).toBe('the agent gave the answer the page shows');
    expect(heldReason('request_human_input', 'Not asked: this page shows "Jonas Berg Payroll 2615".')).toBe('the agent can do or read it itself');
    expect(heldReason('navigate', 'Not opened yet: you filled [1]…')).toBe('the form filled was not sent');
    expect(heldReason('click_element', 'Not pressed yet: you filled [3] …, and [6] is a link that may leave the page and lose what you typed.')).toBe('the form filled was not sent');
    expect(heldReason('click_element', 'Not pressed again: you pressed [2] …')).toBe('pressed at the step before, it would add again');
    expect(heldReason('input_text', 'Not typed: [3] holds what you typed there already.')).toBe('the field holds it already');
    expect(heldReason('click_element', 'Not pressed: it only jumps to #breads of this page…')).toBe('the page is shown whole already');
    expect(heldReason('click_element', 'Not pressed: it is already as the task asks: …')).toBe('it is already as the task asks');
    expect(heldReason('click_element', 'Not pressed: you wrote that you press "Log in", which is [4]…')).toBe('the agent named another element');
    expect(heldReason('click_element', 'Not pressed: no element of the page is named "Payroll"…')).toBe('the agent named another element');
    expect(heldReason('click_element', 'Not pressed: the task names [3] checkbox …')).toBe('the task names another element');
    expect(heldReason('click_element', 'Not pressed yet: this would send the form with [1] "Name" empty.')).toBe('the form it sends has empty fields');
  });
});
