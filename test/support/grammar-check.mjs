// Compiles a JSON-schema grammar with node-llama-cpp (as the model server does) and checks
// answers against it. Reads {schema, answers: string[]} on stdin, prints [{ok, error?}].
// A plain Node script: node-llama-cpp is an ES module with top-level await, which jest's
// module system cannot load.
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { schema, answers } = JSON.parse(input);
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.disabled });
let grammar;
try {
  grammar = await llama.createGrammarForJsonSchema(schema);
} catch (err) {
  process.stdout.write(JSON.stringify({ compiled: false, error: String(err?.message ?? err) }));
  process.exit(0);
}
const results = answers.map((text) => {
  try {
    grammar.parse(text);
    return { ok: true };
  } catch (err) {
    return { ok: false, error: String(err?.message ?? err) };
  }
});
process.stdout.write(JSON.stringify({ compiled: true, rules: grammar.grammar.split('\n').length, results }));
await llama.dispose();
