import { z } from 'zod';
import { elementText } from '../policy/action-facts';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { ACTION_TIMEOUT_MS, targetElement } from './element-target';
import { elementIndex } from './fields';
import { actAndSettle, outcomeNote } from './navigation-watch';

const schema = z.object({
  index: elementIndex(),
  fileIds: z.array(z.string().min(1)).min(1).max(20).describe('fileIds from the list of available files'),
});

export const uploadFileTool: AgentTool<typeof schema, 'upload_file'> = {
  name: 'upload_file',
  description: 'Put one or more of the available files (listed in the task) into a file input, by the input\'s [index].',
  schema,
  async execute(ctx, { index, fileIds }) {
    const available = ctx.files?.available() ?? [];
    const unknown = fileIds.filter((id) => !available.some((file) => file.fileId === id));
    if (unknown.length) {
      throw new Error(`Unknown fileIds ${unknown.join(', ')}; available: ${available.map((file) => `${file.fileId} (${file.name})`).join(', ') || 'none'}`);
    }
    const { locator, target, name } = await targetElement(ctx, index);
    const paths = await Promise.all(fileIds.map((id) => ctx.files!.localPath(id)));
    const urlBefore = ctx.page.url();
    // The page reacts to the files (reads them, shows them, may submit its form): settle like a click.
    const outcome = await attempt(ctx.signal, `Uploading to ${name}`, () => actAndSettle(ctx, () => abortable(locator.setInputFiles(paths, { timeout: ACTION_TIMEOUT_MS }), ctx.signal)));
    const names = fileIds.map((id) => available.find((file) => file.fileId === id)!.name);
    return { summary: `Set ${names.join(', ')} on ${name}${outcomeNote(ctx, urlBefore, outcome)}`, target: `${target}: ${names.join(', ')}` };
  },
  // The file input's text.
  async policyFacts(request) {
    return { texts: await elementText(request) };
  },
  recording: { index: 'element' },
  playwright: (a, { on, file }) => (on && Array.isArray(a.fileIds) ? [`await ${on}.setInputFiles([${a.fileIds.map((id) => file(String(id))).join(', ')}]);`] : []),
};
