import { ACTION_NAMES, AGENT_ACTIONS, isAgentAction, POLICY_ACTION_TYPES, REPLAYABLE_ACTIONS } from './actions';

describe('the action vocabulary', () => {
  it('lets policies name every agent action but done, in the vocabulary order', () => {
    expect(POLICY_ACTION_TYPES).toEqual(Object.keys(AGENT_ACTIONS).filter((name) => name !== 'done'));
  });

  it('replays what a recording can perform again without the model or a person', () => {
    expect([...REPLAYABLE_ACTIONS].sort()).toEqual(
      ['click_element', 'go_back', 'input_text', 'manual_click', 'manual_key_press', 'manual_type', 'navigate', 'scroll', 'select_option', 'send_keys', 'switch_tab', 'upload_file', 'wait'].sort(),
    );
    for (const name of ['done', 'extract', 'request_human_input', 'manual_double_click']) expect(REPLAYABLE_ACTIONS.has(name)).toBe(false);
  });

  it('names every action of the events once, the agent’s and the manual ones', () => {
    expect(new Set(ACTION_NAMES).size).toBe(ACTION_NAMES.length);
    expect(ACTION_NAMES).toEqual(expect.arrayContaining(['done', 'manual_click', 'manual_double_click']));
    expect(isAgentAction('click_element')).toBe(true);
    expect(isAgentAction('manual_click')).toBe(false);
    expect(isAgentAction('toString')).toBe(false);
  });
});
