/** What a person does by hand in the live view, as the exported Playwright test performs it again. */
import { lit } from '../../recording/playwright-code';
import type { ManualActionRegistry } from '../types';

export const manualActions: ManualActionRegistry = {
  manual_click: {
    name: 'manual_click',
    playwright: (a, { on }) => (on ? [`await ${on}.click();`] : [`await page.mouse.click(${Number(a.x)}, ${Number(a.y)});`]),
  },
  manual_double_click: {
    name: 'manual_double_click',
    playwright: (a, { on }) => (on ? [`await ${on}.dblclick();`] : [`await page.mouse.dblclick(${Number(a.x)}, ${Number(a.y)});`]),
  },
  manual_type: {
    name: 'manual_type',
    // What a person typed into a secret field is not recorded.
    playwright: (a, { text }) =>
      typeof a.text === 'string'
        ? [`await page.keyboard.type(${text(a.text)});`]
        : ['// A person typed into a secret field here: fill it in yourself.', 'throw new Error("This step needs what a person typed into a secret field");'],
  },
  manual_key_press: {
    name: 'manual_key_press',
    playwright: (a) => (typeof a.key === 'string' ? [`await page.keyboard.press(${lit(a.key)});`] : []),
  },
};
