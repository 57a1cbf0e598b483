/**
 * How observed elements are found again. The index lives on the element as an attribute so
 * that a plain CSS selector (which pierces open shadow roots) finds it in any frame; the
 * page-side state behind STATE_KEY keeps the numbering stable between observations.
 */
export const INDEX_ATTRIBUTE = 'data-agent-idx';
export const STATE_KEY = '__agentObserver';

export const indexSelector = (index: number): string => `[${INDEX_ATTRIBUTE}="${index}"]`;
