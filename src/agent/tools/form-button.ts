/**
 * A button of a form that does not send it (`type="button"`: a day of a week strip, "Later
 * dates", a time slot). A press of it leaves what the agent filled unsent; when the button
 * stays pressed (`aria-pressed="true"`), the press chose one of the form's values, as a radio
 * does. The default model chose the guests, pressed a time slot and called the booking done:
 * the slot's press had been taken for the form's send, so nothing held the done.
 */
import type { Locator } from 'playwright-core';

/** What a press of a form's button did to the form: `plain` left it as it was, `pressed` chose a value of it. */
export type FormPress = 'plain' | 'pressed';

/** How long the page may take to say what the element is (a loaded machine took more than 500 ms). */
const READ_MS = 2_000;

/** Runs in the page: the element is a button of a form that does not send it. */
function isPlainFormButton(el: Element): boolean {
  const type = (el.getAttribute('type') ?? '').toLowerCase();
  const plain = (el.tagName === 'BUTTON' && type === 'button') || (el.tagName === 'INPUT' && type === 'button');
  return plain && !!((el as HTMLButtonElement).form ?? el.closest('form'));
}

/** Whether the element is a button of a form that does not send it (false when the page cannot say). */
export async function plainFormButton(locator: Locator): Promise<boolean> {
  return locator.evaluate(isPlainFormButton, undefined, { timeout: READ_MS }).catch(() => false);
}

/** After the press of a plain form button that left the page where it was: whether it chose a value (it is pressed now). */
export async function formPressAfter(locator: Locator): Promise<FormPress> {
  const pressed = await locator.evaluate((el) => el.getAttribute('aria-pressed') === 'true', undefined, { timeout: READ_MS }).catch(() => false);
  return pressed ? 'pressed' : 'plain';
}
