import { z } from 'zod';
import type { LlmToolSpec } from '../llm/types';
import type { TaskParams } from '../../contracts/session-types';
import type { AgentTool, StepScript, ToolRegistry } from '../types';
import { AGENT_ACTIONS, isAgentAction, isManualAction, type AgentAction } from '../../contracts/actions';
import { clickElementTool } from './click-element';
import { doneSpec, doneTool } from './done';
import { extractTool } from './extract';
import { goBackTool } from './go-back';
import { inputTextTool } from './input-text';
import { manualActions } from './manual-actions';
import { navigateTool } from './navigate';
import { requestHumanInputTool } from './request-human-input';
import { scrollTool } from './scroll';
import { selectOptionTool } from './select-option';
import { sendKeysTool } from './send-keys';
import { switchTabTool } from './switch-tab';
import { uploadFileTool } from './upload-file';
import { waitTool } from './wait';

/** One tool per action of the vocabulary (contracts/actions.ts), and no other. */
const TOOLS: ToolRegistry = {
  done: doneTool,
  navigate: navigateTool,
  click_element: clickElementTool,
  input_text: inputTextTool,
  select_option: selectOptionTool,
  scroll: scrollTool,
  send_keys: sendKeysTool,
  switch_tab: switchTabTool,
  go_back: goBackTool,
  wait: waitTool,
  extract: extractTool,
  upload_file: uploadFileTool,
  request_human_input: requestHumanInputTool,
};

/**
 * Everything the agent can do, one action per step, in the vocabulary's order with done
 * first: a small model reads the list from the top, and one that saw done last kept acting on
 * a page that already answered the task (scrolling, clicking the answer).
 */
export const agentTools: AgentTool[] = [TOOLS.done, ...(Object.keys(AGENT_ACTIONS) as AgentAction[]).filter((name) => name !== 'done').map((name) => TOOLS[name])];

const toolsByName = new Map<string, AgentTool>(agentTools.map((tool) => [tool.name, tool]));

/** The agent's tool of that name, if it has one. */
export function toolNamed(name: string): AgentTool | undefined {
  return toolsByName.get(name);
}

/**
 * The tools as the model sees them. The schemas describe the input side: arguments with a
 * default are optional for the model.
 */
export function toolSpecs(params: Pick<TaskParams, 'outputType' | 'outputSchema'> = { outputType: 'text' }): LlmToolSpec[] {
  return agentTools.map((tool) =>
    tool === TOOLS.done
      ? doneSpec(params)
      : {
          name: tool.name,
          description: tool.description,
          parameters: z.toJSONSchema(tool.schema, { io: 'input' }) as Record<string, unknown>,
        },
  );
}

/**
 * How a recorded step of this action is written in the exported Playwright test: its tool's
 * script, or the manual action's; undefined for a name that is not in the vocabulary.
 */
export function scriptOf(action: string): StepScript | undefined {
  if (isAgentAction(action)) return TOOLS[action].playwright;
  if (isManualAction(action)) return manualActions[action].playwright;
  return undefined;
}
