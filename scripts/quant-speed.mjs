// Measures each weights file of the default model on this CPU and prints the one a step takes
// the least time with (scripts/quant-choice.js) as its last line; a JSON line of the measures
// before it. Usage: node quant-speed.mjs NODE_MODULES THREADS QUANT=FILE...
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chooseQuant } = require('./quant-choice.js');
const [nodeModules, threadsArg, ...files] = process.argv.slice(2);
const { getLlama } = await import(path.join(nodeModules, 'node-llama-cpp/dist/index.js'));
const threads = Number(threadsArg) || os.availableParallelism();
const BATCH = 128;
const SINGLES = 12;

const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' });
const measures = {};
for (const entry of files) {
  const [quant, file] = [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)];
  const model = await llama.loadModel({ modelPath: file });
  const context = await model.createContext({ contextSize: 1024, sequences: 1, threads });
  const sequence = context.getSequence();
  const text = Array.from({ length: 40 }, (_, i) => `[${i + 1}] button "Item ${i + 1} of the list"`).join('\n');
  const tokens = model.tokenize(text);
  // a first pass reads the weights in from the disk: not counted
  await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(0, 16));
  let started = performance.now();
  await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(16, 16 + BATCH));
  const batchMs = performance.now() - started;
  started = performance.now();
  for (const token of tokens.slice(16 + BATCH, 16 + BATCH + SINGLES)) await sequence.evaluateWithoutGeneratingNewTokens([token]);
  const tokenMs = (performance.now() - started) / SINGLES;
  measures[quant] = { batchTokens: BATCH, batchMs: Math.round(batchMs), tokenMs: Math.round(tokenMs * 10) / 10 };
  await context.dispose();
  await model.dispose();
}
const choice = chooseQuant(measures, 'q4_1');
console.log(JSON.stringify({ threads, measures, estimatedStepMs: choice.estimates }));
console.log(choice.quant);
process.exit(0);
