import type { Step } from '../test/support/scripted-model';

/** The scripted model's actions, by the label of the element they act on (the eval tasks' scripts). */
export const done = (message = 'Done'): Step => ({ tool: 'done', args: { message } });
export const click = (label: string): Step => ({ tool: 'click_element', args: { index: { ref: label } } });
export const type = (label: string, text: string): Step => ({ tool: 'input_text', args: { index: { ref: label }, text } });
export const choose = (label: string, value: string): Step => ({ tool: 'select_option', args: { index: { ref: label }, value } });
export const scrollDown = (): Step => ({ tool: 'scroll', args: { direction: 'down', amount: 1 } });
export const wait = (seconds: number): Step => ({ tool: 'wait', args: { seconds } });
