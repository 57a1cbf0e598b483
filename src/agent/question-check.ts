/**
 * A question to the human that asks for what the agent can do or read itself is held: the
 * model is told what a human is for, and asking again goes through (the agent's own work is
 * held twice, heldQuestion). A small
 * model asked a person to "click on the 'Oak Rocking Chair' link", to "extract the names and
 * cities from the visible text", for credentials its secrets held, and for credentials "to
 * access the search results page" on a page without a sign-in that showed the answer; each
 * ended the task waiting for a human while the page held the answer.
 */
import type { Page } from 'playwright-core';
import type { TaskSecrets } from './secrets/secrets';
import { givenValues, holds } from './task-values';

/** Asks the human to do what a tool does (the first words), or to read the page. */
const TOOL_WORK = /^\s*(?:please\s+|can you\s+|could you\s+)?(?:click|press|tap|extract|select|choose|pick|navigate|go to|open|scroll|search|find|look|read|check|list|fill|wait|reload|refresh)\b/i;
const PAGE_WORK = /\b(?:from|on|in) (?:the|this) (?:page|table|list|screen|site)\b|\bvisible text\b/i;
/**
 * Asks the human to sign in: theirs to do when the task gave no credentials, the agent's when
 * its secrets hold some (a library card's number and PIN: the default model asked for them
 * four times, both in its secrets).
 */
const SIGN_IN = /\b(?:sign|log)\s?in\b|\b(?:username|password|credentials|pin|passcode)\b|\b(?:card|account|member(?:ship)?|customer) (?:number|no)\b/i;
const ONE_TIME = /\bone[- ]time\b|\bcode\b|\botp\b|\b2fa\b|\b(?:sent|texted) to\b/i;
/** What only a human gives, whatever else the question names. */
const HUMANS_OWN = /\bone[- ]time\b|\bcode\b|\botp\b|\b2fa\b|\bcaptcha\b|\bapprov|\bconfirm|\bpermission\b|\ballow\b|\bmay i\b|\bshould i\b/i;
/** Words that name nothing a value is given for. */
const PLAIN = new Set('a an the to of and or for with into in on at by from as is it its this that your my their our please then also new set use type enter fill field provide give tell what which every each'.split(' '));
/** Words before a value in the prompt that name what it is for: "the phone number 555-0100" gives phone, number. */
const NAMING_WORDS = 4;

/**
 * The values the task gives that the question asks for: it names a word the prompt puts just
 * before the value (`Please provide your phone number` for "call me back at the phone number
 * 555-0100"). The default model asked that, with the number in its own prompt.
 */
export function askedGivenValues(question: string, prompt: string): string[] {
  if (HUMANS_OWN.test(question)) return [];
  const asked = new Set((question.toLowerCase().match(/[a-z]{3,}/g) ?? []).map((word) => word.replace(/s$/, '')));
  return givenValues(prompt).filter((value) => {
    const at = prompt.indexOf(value);
    if (at < 0) return false;
    const before = (prompt.slice(0, at).toLowerCase().match(/[a-z]+/g) ?? []).slice(-NAMING_WORDS);
    return before.some((word) => word.length >= 3 && !PLAIN.has(word) && asked.has(word.replace(/s$/, '')));
  });
}

/** A task that tells the agent to ask its human something: its questions go through. */
const TASK_ASKS_HUMAN = /\b(?:ask|check with|confirm with|let me (?:choose|decide|pick)|wait for)\b/i;

/** The words of a text that say what it is about: 4 letters or more, plural made singular, plain words left out. */
function topicWords(text: string): Set<string> {
  const words = (text.toLowerCase().match(/[a-z]{4,}/g) ?? []).map((w) => w.replace(/ies$/, 'y').replace(/s$/, ''));
  return new Set(words.filter((w) => !PLAIN.has(w)));
}

/**
 * Asks the human for what the task itself asks, three of its words or more: "Please provide
 * the names and cities of the people in the team directory" for "List every person in the
 * team directory with their name and city". The default model asked that at its first step.
 */
export function asksForTask(question: string, prompt: string): boolean {
  if (HUMANS_OWN.test(question) || SIGN_IN.test(question) || TASK_ASKS_HUMAN.test(prompt)) return false;
  const task = topicWords(prompt);
  return [...topicWords(question)].filter((word) => task.has(word)).length >= 3;
}

/**
 * Why the question is held, said to the model; undefined when it goes to the human.
 * `timesHeld`: questions held in this task so far. A question for what the agent can do or
 * the task gives (a press, the page's lines, a value or a secret it holds) is held twice, the
 * second time with no offer to ask again: the default model, told once, waited a second and
 * asked a person again to "accept the terms of service by clicking the Continue button" and
 * to "provide the names and cities of all people listed in the Team directory" on the page
 * that listed them. Any other kind is held once; a third question always goes through.
 * `signInShown`: whether the page has a password field (in any of its frames); `prompt`: the
 * task's; `typed`: what the agent typed and chose in this task; `firstStep`: no action made in
 * the task yet (a question then, of what only a human gives or a task that says to ask aside,
 * asks before the page was tried: the default model asked its human at its first step, a
 * review list on the page it had not scrolled). `sent`: the form the agent filled was sent and
 * this is the page it opened (told to send the form it had sent, the default model went back to
 * it and filled it again: 8 steps more).
 */
export function heldQuestion(args: unknown, secrets: TaskSecrets | undefined, timesHeld: number, signInShown = true, prompt = '', typed: readonly string[] = [], firstStep = false, sent = false): string | undefined {
  if (timesHeld >= 2) return undefined;
  const { type, value } = args as { type?: unknown; value?: unknown };
  const question = String(value ?? '');
  const names = secrets?.catalogue().filter((entry) => !entry.oneTimeCode).map((entry) => entry.name) ?? [];
  const values = type === 'credentials' ? [] : askedGivenValues(question, prompt);
  let why: string | undefined;
  /** The agent's own work, whatever the model says after a first hold. */
  let own = false;
  if ((type === 'credentials' || (SIGN_IN.test(question) && !ONE_TIME.test(question))) && names.length) {
    why = `your secrets hold ${names.map((name) => `<secret>${name}</secret>`).join(', ')}: type them with input_text`;
    own = true;
  } else if (values.length) {
    const done = values.every((value) => typed.some((text) => holds(text, value)));
    const next = !done ? 'type it with input_text' : sent ? 'you typed it, and the form was sent already: this page is what it opened; if the task asks for nothing more, call done' : 'you typed it already: send the form it is in with its button';
    why = `the task gives it: ${values.map((value) => `"${value}"`).join(', ')}; ${next}`;
    own = true;
  } else if (type === 'credentials' && !signInShown) {
    why = 'this page asks for no credentials (it has no password field); to answer with what the page shows, call done with it';
  } else if (TOOL_WORK.test(question) || PAGE_WORK.test(question) || asksForTask(question, prompt)) {
    why = 'this is for you to do: press, type and choose with the tools, and to answer with what the page shows, call done with it';
    own = !HUMANS_OWN.test(question);
  } else if (firstStep && type !== 'credentials' && !SIGN_IN.test(question) && !HUMANS_OWN.test(question) && !TASK_ASKS_HUMAN.test(prompt)) {
    why = 'you have not tried the page yet: read it, scroll, press, type and choose with the tools first, and to answer with what the page shows, call done with it';
  }
  if (!why) return undefined;
  if (timesHeld === 1) return own ? `Not asked again: ${why}. The task is yours to finish with the tools: where a page lacks what it needs, go back or open the page that has it.` : undefined;
  return `Not asked: ${why}. A human is asked only for what neither the pages nor the task give you (a code sent to their phone, a CAPTCHA, an approval). If that is still what you need, call request_human_input again.`;
}

/** Whether a frame of the page has a password field (a frame that cannot be read counts as having one). */
export async function hasPasswordField(page: Page): Promise<boolean> {
  for (const frame of page.frames()) {
    const count = await frame.locator('input[type="password" i]').count().catch(() => 1);
    if (count > 0) return true;
  }
  return false;
}
