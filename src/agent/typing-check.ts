/**
 * A typing that puts a value where it does not belong: a value the task gives for another
 * empty field of the page (form-plan.ts), or the label of an element of the page that the
 * task does not give. Held once per field and text. The default model, told "type "Tom Baker"
 * into [5]", typed the search button's "Search" into the help search four times, then "Tom
 * Baker" into it five times.
 */
import { fieldsToFill, planFields, type PlannedValue, type SecretName } from './form-plan';
import { observedElements, type ObservedElement } from './observe/page-diff';

/** How a held typing of a value that belongs elsewhere begins. */
export const ELSEWHERE_HELD = 'Not typed: the task gives';
/** How a held typing of an element's label begins. */
export const LABEL_HELD = 'Not typed: it is the label of';

const squeeze = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();
const SECRET = /^<secret>[^<]+<\/secret>$/;
const valueOf = (line: string) => /\bvalue="((?:[^"\\]|\\.)*)"/.exec(line)?.[1]?.replace(/\\(.)/g, '$1');

/**
 * A secret another field holds already, typed into a field the task gives another secret for.
 * The default model, told "type "<secret>pin</secret>" into [3]" (PIN), typed the card number's
 * secret there too, and the sign-in failed.
 */
function typedElsewhere(plan: PlannedValue[], elements: ObservedElement[], index: number, text: string): string | undefined {
  const own = plan.find((p) => p.tool === 'input_text' && p.index === index);
  // (secrets only: a value of the task's words is judged by the words, "Alan Turing" typed
  // again into the name field after the company's)
  if (!own || squeeze(own.value) === squeeze(text) || !SECRET.test(own.value) || !SECRET.test(text)) return undefined;
  const holder = elements.find((e) => e.index !== index && squeeze(valueOf(e.line) ?? '') === squeeze(text));
  const field = elements.find((e) => e.index === index);
  if (!holder || !field) return undefined;
  return `${ELSEWHERE_HELD} "${own.value}" for [${index}] "${field.label}"; "${text}" is in [${holder.index}] "${holder.label}" already. Type "${own.value}" into [${index}]; if "${text}" is what it takes, type it again.`;
}

/** The note when typing `text` into [index] puts it where it does not belong, or undefined. */
export function misplacedTyping(task: string, observation: string, index: number, text: string, secrets: readonly SecretName[] = []): string | undefined {
  const elements = observedElements(observation);
  const field = elements.find((e) => e.index === index);
  if (!field || !text.trim()) return undefined;
  const plan = planFields(task, observation, fieldsToFill(observation), secrets);
  const owner = plan.find((p) => p.tool === 'input_text' && squeeze(p.value) === squeeze(text));
  if (owner && owner.index !== index && !plan.some((p) => p.index === index)) {
    const label = elements.find((e) => e.index === owner.index)?.label ?? '';
    return `${ELSEWHERE_HELD} "${text}" for [${owner.index}] "${label}"; [${index}] is ${field.role} "${field.label}". To type it there, call input_text with index ${owner.index}; if [${index}] is what you meant, type into [${index}] again.`;
  }
  const repeated = typedElsewhere(plan, elements, index, text);
  if (repeated) return repeated;
  // the label of an element (a button's "Search"), not a value the task gives
  const named = elements.find((e) => e.index !== index && squeeze(e.label) === squeeze(text));
  if (named && !squeeze(task).includes(squeeze(text))) {
    return `${LABEL_HELD} [${named.index}] ${named.role} "${named.label}" on this page, not a value the task gives. Type what the task gives for [${index}] "${field.label}"; if "${text}" is what it takes, type it again.`;
  }
  return undefined;
}
