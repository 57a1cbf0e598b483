/**
 * The order of an answer's actions: how an action is named to the model, and a list begun
 * at its first typing when a link of the page is pressed before it.
 */
import { roleOf } from './done-check';
import type { ListedAction, TaskMemory } from './task-memory';
import { indexOf } from './tools/fields';

/** A short name of an action for the model: `input_text [3]`. */
export function actionName(tool: string, args: unknown): string {
  const index = indexOf(args);
  return index === undefined ? tool : `${tool} [${index}]`;
}

/**
 * A list that presses a link of this page before it types into one of its fields: the press
 * would open another page and end the list, the typing never done. The actions before the
 * first typing are answered as not performed and the list begins at the typing. The default
 * model, on a search form, listed the page's "Lisbon" and "Seville" links and the search
 * button before typing "Ghent", and read the stays of Lisbon as those of Ghent.
 */
export function typingFirst(memory: Pick<TaskMemory, 'lastObservation' | 'answerCall'>, listed: ListedAction[]): ListedAction[] {
  const typing = listed.findIndex((a) => a.tool.name === 'input_text' || a.tool.name === 'select_option');
  if (typing <= 0) return listed;
  const before = listed.slice(0, typing);
  const link = before.find((a) => {
    const index = indexOf(a.args);
    return a.tool.name === 'click_element' && index !== undefined && roleOf(memory.lastObservation, index) === 'link';
  });
  if (!link) return listed;
  const typed = actionName(listed[typing].tool.name, listed[typing].args);
  const note = `Not performed: ${actionName(link.tool.name, link.args)} is a link: it would open another page and end the list before ${typed}, so the list began at ${typed}. Press what sends the form after the typing.`;
  for (const action of before) memory.answerCall(action.callId, note);
  return listed.slice(typing);
}
