/**
 * What the task gives for each empty field of a form the agent tried to send, matched by what
 * the field is (an e-mail, a phone, a date, a first or last or full name, a search, a choice
 * among options the task names), so that the held press can spell it out. Told to fill five
 * empty fields "with what the task gives", the default model typed the e-mail address into
 * "First name" and a race's name into "Running club".
 */
import type { EmptyField } from './form-fields';
import { OPTIONS_HINT } from './observe/page-diff';
import { givenValues, searchTerms, taskPassword } from './task-values';
import { meantWords } from './meanings';

export interface PlannedValue {
  index: number;
  value: string;
  tool: 'input_text' | 'select_option';
}

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
/** Month names by their first three letters, January first; a month name in a pattern (its capture group). */
export const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
export const MONTH = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DAY_MONTH_YEAR = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`, 'i');
const MONTH_DAY_YEAR = new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'i');
const ISO = /\b(\d{4})-(\d{2})-(\d{2})\b/;
/** A person's name: two or three capitalised words of letters only. */
const PERSON = /\b[A-Z][a-zà-ÿ'’-]+(?:\s+[A-Z][a-zà-ÿ'’-]+){1,2}\b/g;
/** The element line: `[5] combobox "T-shirt size" options="XS | S | M"`. */
const LINE = (index: number) => new RegExp(`^\\s*\\[${index}\\] (\\S+) "((?:[^"\\\\]|\\\\.)*)"(.*)$`, 'm');
/** Labels of a name field that is not the person's. */
/** Words that open a request, capitalised at a sentence's start. */
const OPENERS = /^(?:I'm|I’m|I|The|My|Our|Please|Sign|Book|Enter|Ask|Send|Register|Add|Put|Find|Tell|Make|Set|Fill|Change|Update|Create|Order|Buy|Get|Call|Write|Type|Contact|Email|Mail|Hi|Hello|Dear)$/;
const OTHER_NAME = /company|business|organi[sz]ation|user ?name|account|card|pet|club|team|street|city|town|file/i;

const squeeze = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();
const pad = (n: number) => String(n).padStart(2, '0');

/** The first date the task gives, as yyyy-mm-dd. */
export function taskDate(task: string): string | undefined {
  const iso = ISO.exec(task);
  if (iso) return iso[0];
  const dmy = DAY_MONTH_YEAR.exec(task);
  if (dmy) return `${dmy[3]}-${pad(MONTHS.indexOf(dmy[2].slice(0, 3).toLowerCase()) + 1)}-${pad(Number(dmy[1]))}`;
  const mdy = MONTH_DAY_YEAR.exec(task);
  if (mdy) return `${mdy[3]}-${pad(MONTHS.indexOf(mdy[1].slice(0, 3).toLowerCase()) + 1)}-${pad(Number(mdy[2]))}`;
  return undefined;
}

/** The first person's name the task gives that is not the site's (in the page's title or address). */
export function personName(task: string, observation: string): string | undefined {
  const site = squeeze(`${/^Title: (.*)$/m.exec(observation)?.[1] ?? ''} ${/^URL: (.*)$/m.exec(observation)?.[1] ?? ''}`);
  for (const m of task.matchAll(PERSON)) {
    // a sentence's opening word ("Enter Ana Silva…", "Please…") is not part of the name
    const words = m[0].split(/\s+/).filter((w, i) => !(i === 0 && OPENERS.test(w)));
    if (words.length < 2 || site.includes(squeeze(words.join(' ')))) continue;
    return words.join(' ');
  }
  return undefined;
}

/** A short option ("4", "M") the task gives next to a word of the field's label: "4 guests", "guests: 4", "size M". */
export function shortOptionSaid(task: string, label: string, option: string): boolean {
  const labelWords = (label.toLowerCase().match(/[a-z]{3,}/g) ?? []).map((w) => w.replace(/s$/, ''));
  const escaped = option.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (!escaped || !new RegExp(`\\b${escaped}\\b`).test(task)) return false;
  return labelWords.some((w) => new RegExp(`\\b${w}s?:?\\s+${escaped}\\b`, 'i').test(task) || new RegExp(`(?<![\\w.,:/-])${escaped}\\s+${w}s?\\b`, 'i').test(task));
}

/** The one option of a choice the task names: a longer option by its words, a short one ("M", "4") next to a word of the field's label ("size M", "4 guests"). */
function optionNamed(task: string, label: string, options: string[]): string | undefined {
  const named = options.filter((option) => {
    const text = option.trim();
    if (!text || /^(?:choose|select|pick|--)/i.test(text)) return false;
    if (text.length <= 2) return shortOptionSaid(task, label, text);
    const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // (not an option the task says no to: "we are on foot, no car")
    return new RegExp(`(?<![\\w-])(?<!\\b(?:no|not|without|never)\\s+(?:an?\\s+|the\\s+)?)${escaped}(?![\\w-])`, 'i').test(task);
  });
  if (named.length === 1) return named[0].trim();
  // none named by its words: the one option of the words the task means ("broken": "damaged")
  const meant = meantWords(task);
  const fits = named.length ? [] : options.filter((option) => (option.toLowerCase().match(/[\p{L}]+/gu) ?? []).some((w) => meant.includes(w)));
  return fits.length === 1 ? fits[0].trim() : undefined;
}

/** A secret the agent may type, by its name (`<secret>username</secret>` is typed for it). */
export interface SecretName {
  name: string;
  oneTimeCode?: true;
}

/** A field for what the user has to say: "Your message", "Comments", "How can we help?". */
const MESSAGE_FIELD = /\bmessage\b|\bcomments?\b|\bdetails\b|\bdescri(?:be|ption)\b|\byour (?:question|enquiry|inquiry)\b|how can we help/i;
/** A sentence of a task that tells the agent what to do, not what to say: "Let their support know", "Send it". */
const INSTRUCTION = /^(?:please\s+)?(?:let|tell|ask|send|contact|write|fill|submit|report|use|sign|log|open|go|find|book|then|and)\b/i;

/**
 * What a message field takes: the text the task quotes as the message ("the message "Please
 * send my invoice""), else the task's sentences that say something rather than tell what to do
 * (no e-mail address or phone number in them). The default model, on a support form, typed
 * "Let their support know; my e-mail is …" as the message, then the e-mail address.
 */
export function taskMessage(task: string): string | undefined {
  const quoted = /\b(?:message|comment|note|saying|says?)\s*(?:of\s+|:\s*)?(?:"([^"\n]{3,500})"|“([^”\n]{3,500})”)/i.exec(task);
  if (quoted) return quoted[1] ?? quoted[2];
  const sentences = task.split(/(?<=[.!?;])\s+/).map((sentence) => sentence.trim()).filter(Boolean);
  const saying = sentences.filter((sentence) => !INSTRUCTION.test(sentence) && !EMAIL_ONLY_IN.test(sentence) && !/\d{3}[\d ()-]{4,}/.test(sentence.replace(/\b[A-Z]{1,3}\s?\d[\d ]+\b/g, '')) && !/\?$/.test(sentence));
  return saying.length && saying.length < sentences.length ? saying.join(' ').replace(/;$/, '.') : undefined;
}
const EMAIL_ONLY_IN = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;

/** A field for the number of a parcel, an order or a booking. */
const REFERENCE_FIELD = /\btracking\b|\b(?:order|booking|parcel|consignment|shipment|invoice|reference|ticket|case)\s*(?:number|no\b|id\b|#|ref)|^reference\b/i;
/** A parcel's, an order's or a booking's number: "PY 4410 2291", "#A-10442", "order 58213". */
const REFERENCE = /(?<![\w@.-])(?:[A-Z]{1,4}[ -]?\d{3,}(?:[ -]\d{2,})*|#\s?[A-Z\d-]*\d[A-Z\d-]*)(?![\w@-])|\b(?:order|booking|reference|ref|tracking|parcel|shipment|invoice|ticket|case)(?:\s+(?:no\.?|number|#))?\s+#?(\d[\d-]{3,}\d)\b/;

/**
 * The number of a parcel, an order or a booking the task gives, for a field that asks for
 * one. The default model, on a support form, typed the task's whole first sentence into
 * "Tracking number".
 */
export function taskReference(task: string): string | undefined {
  const m = REFERENCE.exec(task);
  return m ? (m[1] ?? m[0]).trim() : undefined;
}

/** A journey's fields: where from, where to. */
const FROM_FIELD = /^(?:from|leaving from|departing from|origin|departure (?:station|airport|city))\b/i;
const TO_FIELD = /^(?:to|going to|destination|arrival (?:station|airport|city))\b/i;
/** "from Leeds to York", "from New York to San Francisco": places of capitalised words. */
const PLACE = "[A-Z][\\w'.-]*(?:\\s+(?:upon\\s+|de\\s+)?[A-Z][\\w'.-]*)*";
const ROUTE = new RegExp(`\\bfrom\\s+(${PLACE})\\s+to\\s+(${PLACE})`);

/** The journey a task names ("trains from Leeds to York"), or undefined. */
export function taskRoute(task: string): { from: string; to: string } | undefined {
  const m = ROUTE.exec(task);
  return m ? { from: m[1].replace(/\.$/, ''), to: m[2].replace(/\.$/, '') } : undefined;
}

/** The one secret whose name fits the field (several: none), as its placeholder. */
function secretFits(secrets: readonly SecretName[], fits: (s: SecretName) => boolean): string | undefined {
  const found = secrets.filter(fits);
  return found.length === 1 ? `<secret>${found[0].name}</secret>` : undefined;
}

/** A login's user field: "Username", "Login", "Member number", "Customer ID". */
const USER_FIELD = /user ?name|\buser\b|\blog ?in\b|\baccount\b|member (?:number|id)|customer (?:number|id)|\bcard (?:number|no)\b|\bid\b/i;
const USER_SECRET = /user|login|account|member|customer|card|e-?mail|\bid\b/i;
const PASSWORD_SECRET = /pass|pwd|\bpin\b/i;
const CODE_FIELD = /\bcode\b|one-time|\botp\b|verification|2fa|authenticat/i;

/** The secret a field of a login takes, when the task's secrets have one for it: password, code, user or e-mail. */
function secretFor(label: string, type: string, secrets: readonly SecretName[]): string | undefined {
  if (!secrets.length) return undefined;
  if (type === 'password' || /password|passcode|\bpin\b/i.test(label)) return secretFits(secrets, (s) => !s.oneTimeCode && PASSWORD_SECRET.test(s.name));
  if (CODE_FIELD.test(label)) return secretFits(secrets, (s) => !!s.oneTimeCode);
  if (type === 'email' || /e-?mail/i.test(label) || USER_FIELD.test(label)) return secretFits(secrets, (s) => !s.oneTimeCode && USER_SECRET.test(s.name) && !PASSWORD_SECRET.test(s.name));
  return undefined;
}

/** The value the task gives for each empty field it leaves no doubt about, in the fields' order (a login's fields: the one secret of each kind the task has). */
export function planFields(task: string, observation: string, empty: readonly EmptyField[], secrets: readonly SecretName[] = []): PlannedValue[] {
  const emails = task.match(EMAIL) ?? [];
  const phones = givenValues(task).filter((v) => !v.includes('@') && v !== taskPassword(task) && v.replace(/\D/g, '').length >= 7);
  const date = taskDate(task);
  const name = personName(task, observation);
  const plan: PlannedValue[] = [];
  for (const field of empty) {
    const line = LINE(field.index).exec(observation);
    if (!line) continue;
    const [, role, label, hints] = line;
    const type = /\btype=(\w+)/.exec(hints)?.[1] ?? '';
    if (field.kind === 'choice') {
      const options = OPTIONS_HINT.exec(hints)?.[1].split(' | ') ?? [];
      const option = optionNamed(task, label, options);
      if (option) plan.push({ index: field.index, value: option, tool: 'select_option' });
      continue;
    }
    if (field.kind !== 'text') continue;
    let value: string | undefined;
    const secret = secretFor(label, type, secrets);
    if (type === 'password' || /password|passcode|\bpin\b/i.test(label)) value = taskPassword(task) ?? secret;
    else if (type === 'email' || /e-?mail/i.test(label)) value = emails[0] ?? secret;
    else if ((USER_FIELD.test(label) || CODE_FIELD.test(label)) && secret) value = secret;
    else if (type === 'tel' || /phone|mobile|telephone/i.test(label)) value = phones[0];
    else if (type === 'date' || /\bdate\b|birth|\bborn\b|\bdob\b/i.test(label)) value = date;
    else if (role === 'searchbox' || type === 'search' || /\bsearch\b/i.test(label)) value = searchTerms(task, observation)[0];
    else if (REFERENCE_FIELD.test(label)) value = taskReference(task);
    else if (MESSAGE_FIELD.test(label)) value = taskMessage(task);
    else if (FROM_FIELD.test(label)) value = taskRoute(task)?.from;
    else if (TO_FIELD.test(label)) value = taskRoute(task)?.to;
    else if (name && /first name|given name|forename/i.test(label)) value = name.split(' ')[0];
    else if (name && /last name|surname|family name/i.test(label)) value = name.split(' ').slice(1).join(' ');
    else if (name && /\bname\b/i.test(label) && !OTHER_NAME.test(label)) value = name;
    if (value) plan.push({ index: field.index, value, tool: 'input_text' });
  }
  return plan;
}

/** The plan said: `type "Ana" into [1], type "Silva" into [2] and choose "M" in [5]`. */
export function planWords(plan: readonly PlannedValue[]): string {
  const parts = plan.map((p) => (p.tool === 'select_option' ? `choose "${p.value}" in [${p.index}]` : `type "${p.value}" into [${p.index}]`));
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : (parts[0] ?? '');
}

/** A value that is an e-mail address alone. */
const EMAIL_ONLY = /^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/;
/** A select's value that chooses nothing yet: "Choose a size", "Select…", "--". */
const UNCHOSEN = /^(?:$|choose|select|pick|please|--|—)/i;

/**
 * The fields of the observation still to fill: empty text fields (not search fields, not
 * disabled or read-only) and selects on no choice yet.
 */
export function fieldsToFill(observation: string): EmptyField[] {
  const fields: EmptyField[] = [];
  for (const m of observation.matchAll(/^\s*\[(\d+)\] (textbox|combobox|select) "((?:[^"\\]|\\.)*)"(.*)$/gm)) {
    const [, index, role, label, hints] = m;
    if (/\bdisabled\b|\breadonly\b/.test(hints)) continue;
    if (role === 'select') {
      if (UNCHOSEN.test(/\bvalue="((?:[^"\\]|\\.)*)"/.exec(hints)?.[1] ?? '')) fields.push({ index: Number(index), label, kind: 'choice' });
    } else if (/\bempty\b/.test(hints) && !/\btype=search\b/.test(hints) && !/\bsearch\b/i.test(label)) {
      fields.push({ index: Number(index), label, kind: 'text' });
    }
  }
  return fields;
}

/**
 * The selects on another option than the one the task names: "Guests" on 2 when the task
 * books for 4 guests. The default model, told only of the empty date field, sent the form
 * with 2 guests.
 */
export function choicesToChange(task: string, observation: string): PlannedValue[] {
  const plan: PlannedValue[] = [];
  for (const m of observation.matchAll(/^\s*\[(\d+)\] select "((?:[^"\\]|\\.)*)"(.*)$/gm)) {
    const [, index, label, hints] = m;
    const value = /\bvalue="((?:[^"\\]|\\.)*)"/.exec(hints)?.[1] ?? '';
    if (/\bdisabled\b/.test(hints) || UNCHOSEN.test(value)) continue;
    const option = optionNamed(task, label, OPTIONS_HINT.exec(hints)?.[1].split(' | ') ?? []);
    if (option && option !== value.trim()) plan.push({ index: Number(index), value: option, tool: 'select_option' });
  }
  return plan;
}

/** Postcodes as countries write them: British "SW1A 1AA", Irish "T12 X4P2", Dutch "1012 AB", five digits (with a ZIP's four). */
const POSTCODE = /\b(?:[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}|[A-Z]\d{2} ?[A-Z\d]{4}|\d{4} ?[A-Z]{2}|\d{5}(?:-\d{4})?)\b/;
/** A street with its number: "12 Quay Street", "221B Baker St". */
const STREET = /\b\d+[A-Za-z]? (?:[A-Z][\w'’-]* ){0,3}(?:Street|St|Road|Rd|Lane|Avenue|Ave|Way|Place|Square|Drive|Court|Terrace|Quay|Row|Hill|Gardens|Close|Crescent|Boulevard|Blvd)\b\.?/;

/** The parts of an address the task gives: its street, the town after it, its postcode. */
export function addressParts(task: string): { street?: string; town?: string; postcode?: string } {
  const street = STREET.exec(task)?.[0];
  const postcode = POSTCODE.exec(task)?.[0];
  const after = street ? task.slice(task.indexOf(street) + street.length) : '';
  const town = /^,\s*([A-Z][\p{L}'’-]+(?![\p{L}\p{N}])(?: [A-Z][\p{L}'’-]+(?![\p{L}\p{N}]))?)/u.exec(after)?.[1];
  // (a number alone is a postcode only after a street: "10000 steps" is none)
  const coded = postcode && (street || /[A-Z]/.test(postcode)) ? postcode : undefined;
  return { street, town: town && coded?.startsWith(town) ? undefined : town, postcode: coded };
}

/** The part of the address a field takes, by its label ("Eircode": the postcode). */
export function addressPartFor(parts: ReturnType<typeof addressParts>, label: string): string | undefined {
  if (/post ?code|zip|eircode|postal/i.test(label)) return parts.postcode;
  if (/street|address line 1|^address$/i.test(label)) return parts.street;
  return /\btown\b|\bcity\b/i.test(label) ? parts.town : undefined;
}

/** A field's value is the part of the address, but for case and spaces. */
export const sameAddressPart = (part: string, value: string): boolean => part.toLowerCase().replace(/\s/g, '') === value.toLowerCase().replace(/\s/g, '');

/**
 * The text fields of an address that hold another value than the part the task gives: the
 * default model, moving a delivery address, retyped the street and town in a dialog that held
 * the old address and left its old Eircode.
 */
export function addressToChange(task: string, observation: string): PlannedValue[] {
  const parts = addressParts(task);
  if (!parts.street && !parts.postcode) return [];
  const plan: PlannedValue[] = [];
  for (const m of observation.matchAll(/^\s*\[(\d+)\] textbox "((?:[^"\\]|\\.)*)"(.*)$/gm)) {
    const [, index, label, hints] = m;
    const value = /\bvalue="((?:[^"\\]|\\.)*)"/.exec(hints)?.[1] ?? '';
    if (/\bdisabled\b|\breadonly\b/.test(hints)) continue;
    const part = addressPartFor(parts, label);
    if (part && !sameAddressPart(part, value)) plan.push({ index: Number(index), value: part, tool: 'input_text' });
  }
  return plan;
}

/**
 * Said after a page whose empty fields the task gives values for (two or more, or one that is
 * not an e-mail address: a newsletter box is no login form): `Note: the task gives what these
 * fields take: type "Ana" into [1], type "Silva" into [2] and choose "M" in [5].` Told only when
 * its press was held, the default model pressed a form's button first in most form tasks, and
 * filled the fields one answer each.
 */
export function formPlanNote(task: string, observation: string, secrets: readonly SecretName[] = []): string | undefined {
  const plan = formPlan(task, observation, secrets);
  return plan && formPlanSentence(plan);
}

/** The note of a plan formPlan made. */
export function formPlanSentence(plan: { words: string; many: boolean }): string {
  return `Note: the task gives what ${plan.many ? 'these fields take' : 'this field takes'}: ${plan.words}.`;
}

/** What formPlanNote says to do, in words (`type "Ana" into [1] and choose "M" in [5]`), and whether it names more than one field. */
export function formPlan(task: string, observation: string, secrets: readonly SecretName[] = []): { words: string; many: boolean } | undefined {
  const planned = planFields(task, observation, fieldsToFill(observation), secrets);
  const changes = [...choicesToChange(task, observation), ...addressToChange(task, observation)].filter((c) => !planned.some((p) => p.index === c.index));
  const plan = [...planned, ...changes].sort((a, b) => a.index - b.index);
  if (!plan.length || (plan.length === 1 && EMAIL_ONLY.test(plan[0].value))) return undefined;
  return { words: planWords(plan), many: plan.length > 1 };
}
