// Which weights of the default model a step takes the least time with on this CPU
// (LLM_QUANT=auto, scripts/lib.sh). A step evaluates the new part of its prompt in one batch
// and generates its answer a token at a time: its time is estimated from a measured batch and
// measured single tokens, at the eval's figures per step (about 300 new prompt tokens, 75
// generated: docs/performance.md). The weights' speeds differ by CPU: on one machine Q4_1
// generated a token in 61 ms against 76 for the shipped Q4_K_M; on another it evaluated 25
// prompt tokens a second against 67.
'use strict';

const STEP_PROMPT_TOKENS = 300;
const STEP_GENERATED_TOKENS = 75;

/** The estimated milliseconds of a step from one file's measures. */
function stepMs(measure) {
  return (STEP_PROMPT_TOKENS * measure.batchMs) / measure.batchTokens + STEP_GENERATED_TOKENS * measure.tokenMs;
}

/**
 * The quant whose estimated step is shortest, with each one's estimate; `fallback` when no
 * measure is usable.
 */
function chooseQuant(measures, fallback) {
  const usable = Object.entries(measures).filter(([, m]) => m && m.batchTokens > 0 && m.batchMs > 0 && m.tokenMs > 0);
  const estimates = Object.fromEntries(usable.map(([quant, m]) => [quant, Math.round(stepMs(m))]));
  if (!usable.length) return { quant: fallback, estimates };
  const [quant] = usable.map(([q]) => q).sort((a, b) => estimates[a] - estimates[b]);
  return { quant, estimates };
}

module.exports = { chooseQuant, stepMs, STEP_PROMPT_TOKENS, STEP_GENERATED_TOKENS };
