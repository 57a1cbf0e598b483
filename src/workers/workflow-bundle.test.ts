import fs from 'node:fs';
import path from 'node:path';
import { sessionWorkflowCode, writeWorkflowBundle } from './workflow-bundle';

describe('the session workflows’ bundle', () => {
  let root: string;
  let workflowsPath: string;
  beforeEach(() => {
    // Inside the checkout, where the bundler finds the Temporal SDK's workflow modules.
    fs.mkdirSync(path.resolve(__dirname, '../../.data'), { recursive: true });
    root = fs.mkdtempSync(path.resolve(__dirname, '../../.data/workflow-bundle-'));
    fs.mkdirSync(path.join(root, 'workflows'));
    workflowsPath = path.join(root, 'workflows/index.js');
    fs.writeFileSync(workflowsPath, 'exports.greet = async function greet() { return "hello"; };\n');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('is not used when the build made none: the worker bundles the workflows itself', () => {
    expect(sessionWorkflowCode(root, workflowsPath)).toEqual({ workflowsPath });
  });

  it('is used once built from this very tree, and no longer once any compiled file changes', async () => {
    const codePath = await writeWorkflowBundle(root, workflowsPath);
    expect(fs.readFileSync(codePath, 'utf8')).toContain('hello');
    expect(sessionWorkflowCode(root, workflowsPath)).toEqual({ workflowBundle: { codePath } });

    fs.writeFileSync(path.join(root, 'other.js'), 'exports.x = 1;\n');
    expect(sessionWorkflowCode(root, workflowsPath)).toEqual({ workflowsPath });
  }, 60_000);
});
