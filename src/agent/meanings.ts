/**
 * Words a task's sentence means without saying them, for choosing a list's option by meaning:
 * "the box crushed and the vase inside broken" means "damaged". The default model, told to
 * choose the topic that fits, chose "My parcel is late" for a broken vase, no word of the task
 * in "My parcel arrived damaged".
 */
const MEANINGS: [RegExp, string[]][] = [
  [/\b(?:broken|broke|crushed|smashed|cracked|dented|torn|shattered|damaged?)\b/i, ['damaged', 'damage', 'broken']],
  [/\b(?:delayed|(?:not|hasn'?t|has not|haven'?t|have not) (?:yet )?(?:arrived|come|been delivered)|still waiting|overdue|running late)\b/i, ['late', 'delayed', 'delay']],
  [/\b(?:lost|missing|never (?:arrived|came|got)|disappeared)\b/i, ['lost', 'missing']],
  [/\b(?:refund|money back|charged twice|overcharged|double charged)\b/i, ['billing', 'refund', 'refunds']],
  [/\b(?:moved house|moved to|new address|wrong address|change (?:the |my )?(?:delivery )?address)\b/i, ['address']],
];

/** The words the task means (lower case), none when it says none of the above. */
export function meantWords(task: string): string[] {
  return [...new Set(MEANINGS.filter(([says]) => says.test(task)).flatMap(([, means]) => means))];
}
