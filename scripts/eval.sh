#!/usr/bin/env bash
# npm run eval: the agent on the evaluation tasks (eval/) with the configured model, on its own
# Temporal, FerretDB and Redis (eval ports, fresh data); prints the JSON report on stdout, logs
# on stderr. With no model configured (no LLM_BASE_URL, LLM_PROVIDER not anthropic) the local
# default model is started for the run. Settings: EVAL_SPLIT (tuning | test | all), EVAL_TASKS,
# EVAL_REPEAT (3), EVAL_TASK_TIMEOUT_MS, EVAL_MAX_STEPS, EVAL_DOCS_ROW=0 (see eval/run.eval.ts and
# docs/eval.md). A run with a real model appends its row to the table of docs/eval.md.
# Ports: EVAL_INFRA_{TEMPORAL,TEMPORAL_UI,FERRETDB,REDIS}_PORT, EVAL_MODEL_PORT.
# Exits non-zero only when the run itself broke.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
# What is missing is installed side by side (run_steps prints on stderr only), the default
# model too when the run will start it.
steps=(ensure_app ensure_system_packages ensure_temporal ensure_ferretdb)
if [ "${EVAL_SCRIPTED:-}" != "1" ] && uses_local_model && { [ -z "${LLM_MODEL:-}" ] || [ "${LLM_PROVIDER:-}" != "local" ]; }; then steps+=(ensure_default_model); fi
run_steps "${steps[@]}"
export DATA_DIR="$ROOT/.data/eval"
OUT_DIR="$ROOT/.data/eval-results"
export EVAL_OUT="$OUT_DIR/eval.json"
export INFRA_TEMPORAL_PORT="${EVAL_INFRA_TEMPORAL_PORT:-7264}" INFRA_TEMPORAL_UI_PORT="${EVAL_INFRA_TEMPORAL_UI_PORT:-8264}" INFRA_FERRETDB_PORT="${EVAL_INFRA_FERRETDB_PORT:-27039}" INFRA_REDIS_PORT="${EVAL_INFRA_REDIS_PORT:-6393}"
export TEMPORAL_NAMESPACE=browser-agent
MODEL_PORT="${EVAL_MODEL_PORT:-8364}"
MODEL_PIDFILE="$DATA_DIR/run/eval-model.pid"

cleanup() {
  stop_pidfile "local model" "$MODEL_PIDFILE"
  bash "$ROOT/scripts/infra.sh" down >&2
}
trap cleanup EXIT

# Fresh state: stop what an earlier run may have left, then wipe its data.
bash "$ROOT/scripts/infra.sh" down >&2
rm -rf "$DATA_DIR" "$OUT_DIR" && mkdir -p "$DATA_DIR/run" "$DATA_DIR/logs" "$OUT_DIR"

if [ "${EVAL_SCRIPTED:-}" != "1" ] && uses_local_model; then
  declare -F start_local_model >/dev/null || die "no model configured (set LLM_BASE_URL, or LLM_PROVIDER=anthropic with LLM_API_KEY) and this checkout cannot start the local one"
  log "no model configured: starting the local default model on 127.0.0.1:$MODEL_PORT"
  start_local_model "$MODEL_PORT" "$DATA_DIR/logs/model.log" "$MODEL_PIDFILE" >&2
  # the model file start_local_model runs, named in the report and the results table
  model_file="$(local_model_path)"
  [ -n "${LLM_MODEL:-}" ] && [ "${LLM_PROVIDER:-}" = "local" ] && model_file="$LLM_MODEL"
  export EVAL_MODEL_NAME="${EVAL_MODEL_NAME:-$(basename "$model_file" .gguf)}"
  export LLM_PROVIDER=local LOCAL_MODEL_URL="http://127.0.0.1:$MODEL_PORT/v1"
fi

bash "$ROOT/scripts/infra.sh" up >&2
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$INFRA_TEMPORAL_PORT" TEST_MONGODB_URL="mongodb://127.0.0.1:$INFRA_FERRETDB_PORT/browser_agent_eval" TEST_REDIS_URL="redis://127.0.0.1:$INFRA_REDIS_PORT"
status=0
npx jest --selectProjects eval --runInBand --forceExit >&2 || status=$?
[ -f "$EVAL_OUT" ] || die "the eval run wrote no report (jest exit $status)"
cat "$EVAL_OUT"
exit "$status"
