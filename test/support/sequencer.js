/**
 * The order of the end-to-end files: the longest known ones first, so that no long file
 * starts last and runs alone while the other jest worker has nothing left to do (a fresh
 * clone has no timings of earlier runs, and jest then orders by file size). The rest keep
 * jest's order.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest loads this file itself, untransformed
const Sequencer = require('@jest/test-sequencer').default;

/** Files of about a minute or more on two cores, longest first. */
const LONG_FIRST = ['schemathesis', 'saved-state', 'eval-verdicts', 'live-channel', 'real-model', 'handover', 'storage-and-locks', 'triggers'];

const rank = (path) => {
  const name = path.replace(/^.*[\\/]/, '').replace(/\.test\.ts$/, '');
  const at = LONG_FIRST.indexOf(name);
  return at < 0 ? LONG_FIRST.length : at;
};

class LongFirst extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    return [...ordered].sort((a, b) => rank(a.path) - rank(b.path));
  }
}

module.exports = LongFirst;
