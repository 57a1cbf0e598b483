// Adds up jest's JSON results of the unit and end-to-end runs and prints one closing line:
// "tests: N passed, N failed, N skipped". Exits 1 when a run left no results or a suite failed
// to run (a suite that fails before its tests run counts no failed test in jest's numbers).
'use strict';
const fs = require('fs');

let passed = 0;
let failed = 0;
let skipped = 0;
let broken = 0;
for (const file of process.argv.slice(2)) {
  let results;
  try {
    results = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    console.log(`no results in ${file}: that run did not finish`);
    broken += 1;
    continue;
  }
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  skipped += results.numPendingTests + results.numTodoTests;
  broken += results.numRuntimeErrorTestSuites;
}
console.log(`tests: ${passed} passed, ${failed + broken} failed, ${skipped} skipped`);
process.exit(failed + broken > 0 ? 1 : 0);
