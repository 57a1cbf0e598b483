import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { startModelServer } from './model-server';

/** ROLE=model: loads LLM_MODEL (a GGUF path or an hf: URI) and serves it until SIGTERM/SIGINT. */
export async function runModelRole(config: Config, logger: Logger): Promise<void> {
  const modelPath = config.LLM_MODEL;
  if (!modelPath.startsWith('hf:') && !fs.existsSync(modelPath)) {
    throw new Error(`No model file at ${modelPath}: \`npm start\` fetches the default model once, or set LLM_MODEL to a GGUF file (or an hf: URI)`);
  }
  const server = await startModelServer({
    modelPath,
    host: config.MODEL_HOST,
    port: config.MODEL_PORT,
    threads: config.LLM_THREADS,
    contextSize: config.LLM_CONTEXT_SIZE,
    sequences: config.LLM_SEQUENCES,
    predictor: config.LLM_PREDICTOR,
    draftModelPath: config.LLM_DRAFT_MODEL,
    apiKey: config.MODEL_API_KEY || undefined,
    shape: { thoughtMaxChars: config.LLM_THOUGHT_CHARS, maxActions: config.LLM_MAX_ACTIONS },
    cacheDir: path.dirname(path.resolve(modelPath.startsWith('hf:') ? path.join(config.DATA_DIR, 'models', 'x') : modelPath)),
    logger: logger.child({ role: 'model' }),
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'model server stopping');
    await server.close().catch((err) => logger.warn({ err }, 'model server close failed'));
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // "ready" only once SIGTERM stops the server cleanly.
  process.stdout.write(JSON.stringify({ msg: 'ready', role: 'model', url: server.url }) + '\n');
}
