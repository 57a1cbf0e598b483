import { toolSpecs } from './tools';
import { boundToPage, observedIndexes, observedTabs } from './page-bound-tools';
import { answerSchema, describeTools } from '../model/answer-format';

const observation = ['URL: http://x/', 'Title: Shop', 'Tabs: [0] Shop (active) | [1] Help', 'Interactive elements:', '[3] link "Home"', '[7] button "Buy"', 'Visible text:', 'Price [9] is not an element'].join('\n');

describe('tools bound to the page', () => {
  it('reads the element and tab indexes the observation lists', () => {
    expect(observedIndexes(observation)).toEqual([3, 7]);
    expect(observedTabs(observation)).toEqual([0, 1]);
  });

  it("offers the observation's indexes as the only values of index, tabs for switch_tab", () => {
    const bound = boundToPage(toolSpecs(), observation);
    const index = (name: string) => (bound.find((t) => t.name === name)!.parameters.properties as any).index;
    expect(index('click_element').enum).toEqual([3, 7]);
    expect(index('scroll').enum).toEqual([3, 7]);
    expect(index('switch_tab').enum).toEqual([0, 1]);
    expect(bound.find((t) => t.name === 'navigate')).toEqual(toolSpecs().find((t) => t.name === 'navigate'));
  });

  it("leaves the tools' description unchanged from page to page, and the element tools out of the grammar on a page without elements", () => {
    const empty = boundToPage(toolSpecs(), 'URL: http://x/\nTitle: Text only\nTabs: [0] Text only (active)\nVisible text:\nHello');
    expect(describeTools(empty)).toBe(describeTools(boundToPage(toolSpecs(), observation)));
    const names = ((answerSchema(empty) as any).properties.actions.items.oneOf as any[]).map((c) => c.properties.name.const);
    expect(names).not.toContain('click_element');
    expect(names).not.toContain('input_text');
    expect(names).toEqual(expect.arrayContaining(['done', 'navigate', 'scroll', 'extract', 'switch_tab']));
    // scroll's index is optional: without elements it can only be left out (null).
    const scroll = ((answerSchema(empty) as any).properties.actions.items.oneOf as any[]).find((c) => c.properties.name.const === 'scroll');
    expect(scroll.properties.arguments.properties.index).toEqual({ type: 'null' });
  });
});
