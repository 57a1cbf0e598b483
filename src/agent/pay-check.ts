/**
 * A press of a button that pays or buys while the task asks for neither: held once per
 * element, to be pressed again if meant. The default model, its race entry sent and told the
 * task may be done, pressed "Pay now" on the payment page.
 */
import { observedElements } from './observe/page-diff';

/** How a held press of a paying button begins. */
export const PAY_HELD = 'Not pressed: it would pay or buy';

/** A label of a button that pays, buys or orders. */
const PAYS = /\b(?:pay|payment|buy|purchase|checkout|check out|place (?:my |the |your )?order|order now|confirm (?:and pay|order|purchase|payment|booking)|donate)\b/i;
/** A label that only leads on to the payment ("Continue to payment", "Go to checkout"). */
const LEADS_ON = /\b(?:continue|proceed|go|next|back|review|details|options|methods?)\b/i;
/** A task that asks to pay, buy or order. */
const ASKS_TO_PAY = /\b(?:pay|pays|paying|paid|payment|buy|buys|buying|purchase|order|checkout|check out|subscribe|donate|book)\b/i;

/** The note when [index] is a button that pays or buys and the task asks for neither, or undefined. */
export function paysUnasked(task: string, observation: string, index: number): string | undefined {
  const pressed = observedElements(observation).find((e) => e.index === index);
  if (!pressed || !['button', 'link'].includes(pressed.role) || !PAYS.test(pressed.label) || LEADS_ON.test(pressed.label) || ASKS_TO_PAY.test(task)) return undefined;
  return `${PAY_HELD}: [${index}] ${pressed.role} "${pressed.label}", and the task asks for no payment or purchase. If the task is done, call done; if the task does need it, press [${index}] again.`;
}
