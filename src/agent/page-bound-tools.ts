import type { LlmToolSpec } from './llm/types';

/** The element indexes an observation lists (its lines `[n] role "label"`). */
export function observedIndexes(observation: string): number[] {
  return [...observation.matchAll(/^\s*\[(\d+)\]/gm)].map((match) => Number(match[1]));
}

/** The tab indexes of the observation's `Tabs:` line. */
export function observedTabs(observation: string): number[] {
  const line = /^Tabs: (.*)$/m.exec(observation)?.[1] ?? '';
  return [...line.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1]));
}

/**
 * The tools with their element (and tab) indexes bound to what the latest observation lists:
 * `index` becomes an enum of those indexes, so a model whose answers follow the schema (the
 * local model's grammar) cannot name an element that is not on the page. With no elements,
 * the enum is empty and a tool that needs one cannot be chosen. For models whose tools are
 * described once and cached (the local model's description leaves integer enums out), the
 * tools' text does not change from step to step.
 */
export function boundToPage(specs: LlmToolSpec[], observation: string): LlmToolSpec[] {
  const elements = observedIndexes(observation);
  const tabs = observedTabs(observation);
  return specs.map((spec) => {
    const props = (spec.parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
    if (!props.index || props.index.type !== 'integer') return spec;
    const allowed = spec.name === 'switch_tab' ? tabs : elements;
    return { ...spec, parameters: { ...spec.parameters, properties: { ...props, index: { ...props.index, enum: allowed } } } };
  });
}
