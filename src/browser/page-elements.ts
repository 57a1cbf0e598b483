/**
 * How the service's in-page scripts mark and name the elements of a page, for the agent's
 * observation, the recording and a person's input alike.
 *
 * How observed elements are found again. The index lives on the element as an attribute so
 * that a plain CSS selector (which pierces open shadow roots) finds it in any frame; the
 * page-side state behind STATE_KEY keeps the numbering stable between observations.
 */
export const INDEX_ATTRIBUTE = 'data-agent-idx';
export const STATE_KEY = '__agentObserver';

export const indexSelector = (index: number): string => `[${INDEX_ATTRIBUTE}="${index}"]`;

/** How the observation names an element (its role and label), and whether what is typed into it is secret. */
export interface ElementInfo {
  role: string;
  label: string;
  /** A field whose content must not be echoed (passwords, one-time codes, card numbers). */
  secret: boolean;
  tag: string;
  inputType: string;
}
