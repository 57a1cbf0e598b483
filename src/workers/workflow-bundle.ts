import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FAILURE_CONVERTER_PATH } from '../temporal/connection';

/**
 * The session workflows' code, bundled once by the build (`npm run build`) instead of by
 * webpack in every worker process at its start. The bundle is written next to the compiled
 * tree with a key of what it was made from (every compiled file and the Temporal SDK's
 * version); a worker takes it only while the key still matches, otherwise it bundles the
 * workflows itself as the SDK does from `workflowsPath`.
 */
const WORKFLOWS_PATH = require.resolve('../workflows');
const TREE_ROOT = path.resolve(path.dirname(WORKFLOWS_PATH), '..');
const BUNDLE_NAME = 'workflow-bundle.js';
const KEY_NAME = 'workflow-bundle.key';

/** One of the two: the worker's `workflowBundle` or its `workflowsPath`. */
export interface WorkflowCode {
  workflowBundle?: { codePath: string };
  workflowsPath?: string;
}

/** The bundle when it was made from this very tree, else the workflows' path. */
export function sessionWorkflowCode(root = TREE_ROOT, workflowsPath = WORKFLOWS_PATH): WorkflowCode {
  const codePath = path.join(root, BUNDLE_NAME);
  try {
    if (fs.readFileSync(path.join(root, KEY_NAME), 'utf8') === treeKey(root) && fs.existsSync(codePath)) return { workflowBundle: { codePath } };
  } catch {
    /* no bundle built: the worker bundles the workflows itself */
  }
  return { workflowsPath };
}

/** What a bundle is made from: every compiled file of the tree (by path and content) and the SDK's version. */
export function treeKey(root: string): string {
  const hash = createHash('sha256');
  hash.update(`temporal ${sdkVersion('@temporalio/worker')} ${sdkVersion('@temporalio/workflow')}\n`);
  for (const file of compiledFiles(root)) hash.update(`${file}\n`).update(fs.readFileSync(path.join(root, file)));
  return hash.digest('hex');
}

function compiledFiles(root: string, dir = ''): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...compiledFiles(root, rel));
    else if (/\.(js|ts)$/.test(entry.name) && rel !== BUNDLE_NAME) files.push(rel);
  }
  return files.sort();
}

function sdkVersion(name: string): string {
  return (JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
}

/** Bundles the session workflows of the tree at `root` and writes the bundle with its key. */
export async function writeWorkflowBundle(root = TREE_ROOT, workflowsPath = WORKFLOWS_PATH): Promise<string> {
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const key = treeKey(root);
  const { code } = await bundleWorkflowCode({ workflowsPath, failureConverterPath: FAILURE_CONVERTER_PATH, logger: quietLogger });
  fs.writeFileSync(path.join(root, BUNDLE_NAME), code);
  fs.writeFileSync(path.join(root, KEY_NAME), key);
  return path.join(root, BUNDLE_NAME);
}

const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn: (message: string) => process.stderr.write(`${message}\n`), error: (message: string) => process.stderr.write(`${message}\n`) };

if (require.main === module) {
  writeWorkflowBundle().then(
    (file) => process.stdout.write(`workflow bundle written: ${path.relative(process.cwd(), file)}\n`),
    (err: unknown) => {
      process.stderr.write(`workflow bundle failed: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
