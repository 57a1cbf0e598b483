#!/usr/bin/env bash
# npm start: installs what is missing, starts Temporal, FerretDB and Redis (unless URLs of
# external ones are given), then the API and a browser worker in one process.
# Ctrl-C or SIGTERM stops everything it started.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export DATA_DIR="${DATA_DIR:-$ROOT/.data}"
# What is missing is installed side by side: the npm packages and the build, Debian's
# packages, the Temporal CLI and FerretDB (unless external services are given) and the
# default model (unless another model is configured).
steps=(ensure_app ensure_system_packages)
[ -n "${TEMPORAL_ADDRESS:-}${MONGODB_URL:-}${REDIS_URL:-}" ] || steps+=(ensure_temporal ensure_ferretdb)
if uses_local_model && [ -z "${LLM_MODEL:-}" ]; then steps+=(ensure_default_model); fi
run_steps "${steps[@]}"

# One npm start at a time per data directory and per Temporal port: a run holds both locks
# from start-up to the end of its clean-up, so a start made while an earlier run still runs
# or stops its services waits for it instead of adopting services about to be stopped (the
# processes it starts never hold the locks: a run killed outright leaves them free). Each run
# stops only the processes it started itself (by pid).
RUN_DIR="$DATA_DIR/run"
LOCK_FILES=("$RUN_DIR/npm-start.lock" "$CACHE_DIR/locks/port-${INFRA_TEMPORAL_PORT:-7233}.lock")
hold_lock 8 "${LOCK_FILES[0]}" "an earlier npm start of $DATA_DIR"
hold_lock 9 "${LOCK_FILES[1]}" "an earlier npm start on these ports"
STARTED_PIDS_FILE="$RUN_DIR/started.$$"
export STARTED_PIDS_FILE
: >"$STARTED_PIDS_FILE" 2>/dev/null || { mkdir -p "$RUN_DIR"; : >"$STARTED_PIDS_FILE"; }

app_pid=""
cleanup() {
  trap - INT TERM EXIT
  if [ -n "$app_pid" ] && kill -0 "$app_pid" 2>/dev/null; then
    kill -TERM "$app_pid" 2>/dev/null || true
    wait "$app_pid" 2>/dev/null || true
  fi
  stop_started "$STARTED_PIDS_FILE"
  exit 0
}
trap cleanup INT TERM EXIT

if [ -z "${TEMPORAL_ADDRESS:-}${MONGODB_URL:-}${REDIS_URL:-}" ]; then
  bash "$ROOT/scripts/infra.sh" up
  # The service reaches the embedded services on the ports they were started on.
  export TEMPORAL_ADDRESS="127.0.0.1:${INFRA_TEMPORAL_PORT:-7233}" MONGODB_URL="mongodb://127.0.0.1:${INFRA_FERRETDB_PORT:-27018}/browser_agent" REDIS_URL="redis://127.0.0.1:${INFRA_REDIS_PORT:-6390}"
else
  log "using the external services given by TEMPORAL_ADDRESS / MONGODB_URL / REDIS_URL"
fi

# No model configured: the local one (the model role, on loopback), fetched once.
if uses_local_model; then
  export LLM_PROVIDER=local MODEL_PORT="${MODEL_PORT:-3090}"
  mkdir -p "$DATA_DIR/run" "$DATA_DIR/logs"
  model_pidfile="$DATA_DIR/run/model.pid"
  # A model an earlier run of this data directory left behind (killed without its clean-up).
  stop_pidfile "the local model left running" "$model_pidfile"
  start_local_model "$MODEL_PORT" "$DATA_DIR/logs/model.log" "$model_pidfile"
  log "model:       local ${LLM_MODEL:-Qwen2.5-Coder-1.5B-Instruct ($(local_model_path))} on 127.0.0.1:$MODEL_PORT (LLM_MODEL=<file.gguf> for another local model; LLM_BASE_URL + LLM_API_KEY + LLM_MODEL, or LLM_PROVIDER=anthropic, for a hosted one)"
fi

node "$ROOT/dist/main.js" 8>&- 9>&- &
app_pid=$!
port="${PORT:-3000}"
for _ in $(seq 1 120); do
  port_open 127.0.0.1 "$port" && break
  kill -0 "$app_pid" 2>/dev/null || die "the service exited during start-up (see its log above)"
  sleep 0.5
done
log "API:         ${PUBLIC_BASE_URL:-http://localhost:$port}   (health: /start/health)"
log "Temporal UI: http://localhost:${INFRA_TEMPORAL_UI_PORT:-8233}"
log "create a user: npm run admin -- users create --email you@example.com --balance 10"
wait "$app_pid"
