/**
 * The action vocabulary: every action the agent may choose (one tool each, src/agent/tools/)
 * and every action a person performs by hand in the live view. The tools' registry is typed
 * against this list (one tool per agent action, no other), and the policy rules, the
 * `action` events, replays and tests derive their lists from it.
 */

interface AgentActionSpec {
  /** A policy rule may name it (`actionTypes`); `done` always ends the task and is never policed. */
  readonly policed: boolean;
  /** A replay performs it again from the recording (the others need the model or a person). */
  readonly replayable: boolean;
}

/** The agent's actions, in the order policies list them. */
export const AGENT_ACTIONS = {
  navigate: { policed: true, replayable: true },
  click_element: { policed: true, replayable: true },
  input_text: { policed: true, replayable: true },
  select_option: { policed: true, replayable: true },
  scroll: { policed: true, replayable: true },
  send_keys: { policed: true, replayable: true },
  switch_tab: { policed: true, replayable: true },
  go_back: { policed: true, replayable: true },
  wait: { policed: true, replayable: true },
  extract: { policed: true, replayable: false },
  upload_file: { policed: true, replayable: true },
  request_human_input: { policed: true, replayable: false },
  done: { policed: false, replayable: false },
} as const satisfies Record<string, AgentActionSpec>;

/** What a person does by hand in the live view, recorded and shown like the agent's actions. */
export const MANUAL_ACTIONS = {
  manual_click: { replayable: true },
  manual_double_click: { replayable: false },
  manual_type: { replayable: true },
  manual_key_press: { replayable: true },
} as const satisfies Record<string, { readonly replayable: boolean }>;

export type AgentAction = keyof typeof AGENT_ACTIONS;
export type ManualAction = keyof typeof MANUAL_ACTIONS;
export type ActionName = AgentAction | ManualAction;

type PolicedAction = { [K in AgentAction]: (typeof AGENT_ACTIONS)[K]['policed'] extends true ? K : never }[AgentAction];

const keysOf = <T extends object>(o: T) => Object.keys(o) as (keyof T & string)[];

/** The actions a policy rule may name. */
export const POLICY_ACTION_TYPES = keysOf(AGENT_ACTIONS).filter((name): name is PolicedAction => AGENT_ACTIONS[name].policed) as [PolicedAction, ...PolicedAction[]];

/** Every action name an `action` event may carry (data.name). */
export const ACTION_NAMES: readonly ActionName[] = [...keysOf(AGENT_ACTIONS), ...keysOf(MANUAL_ACTIONS)];

/** The recorded actions a replay performs again. */
export const REPLAYABLE_ACTIONS: ReadonlySet<string> = new Set<string>([
  ...keysOf(AGENT_ACTIONS).filter((name) => AGENT_ACTIONS[name].replayable),
  ...keysOf(MANUAL_ACTIONS).filter((name) => MANUAL_ACTIONS[name].replayable),
]);

export const isAgentAction = (name: string): name is AgentAction => Object.hasOwn(AGENT_ACTIONS, name);
export const isManualAction = (name: string): name is ManualAction => Object.hasOwn(MANUAL_ACTIONS, name);
