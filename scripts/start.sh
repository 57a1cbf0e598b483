#!/usr/bin/env bash
# npm start: installs what is missing, starts Temporal, FerretDB and Redis (unless URLs of
# external ones are given), then the API and a browser worker in one process.
# Ctrl-C or SIGTERM stops everything it started.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export DATA_DIR="${DATA_DIR:-$ROOT/.data}"
ensure_node_modules
ensure_build

started_infra=""
if [ -z "${TEMPORAL_ADDRESS:-}${MONGODB_URL:-}${REDIS_URL:-}" ]; then
  bash "$ROOT/scripts/infra.sh" up
  started_infra=1
else
  log "using the external services given by TEMPORAL_ADDRESS / MONGODB_URL / REDIS_URL"
  ensure_system_packages
fi

app_pid=""
model_pidfile=""
cleanup() {
  trap - INT TERM EXIT
  if [ -n "$app_pid" ] && kill -0 "$app_pid" 2>/dev/null; then
    kill -TERM "$app_pid" 2>/dev/null || true
    wait "$app_pid" 2>/dev/null || true
  fi
  [ -n "$model_pidfile" ] && stop_pidfile "the local model" "$model_pidfile"
  [ -n "$started_infra" ] && bash "$ROOT/scripts/infra.sh" down
  exit 0
}
trap cleanup INT TERM EXIT

# No model configured: the local one (the model role, on loopback), fetched once.
if uses_local_model; then
  export LLM_PROVIDER=local MODEL_PORT="${MODEL_PORT:-3090}"
  mkdir -p "$DATA_DIR/run" "$DATA_DIR/logs"
  model_pidfile="$DATA_DIR/run/model.pid"
  stop_pidfile "the local model left running" "$model_pidfile"
  start_local_model "$MODEL_PORT" "$DATA_DIR/logs/model.log" "$model_pidfile"
  log "model:       local ${LLM_MODEL:-Qwen2.5-Coder-1.5B-Instruct ($DEFAULT_MODEL_PATH)} on 127.0.0.1:$MODEL_PORT (LLM_MODEL=<file.gguf> for another local model; LLM_BASE_URL + LLM_API_KEY + LLM_MODEL, or LLM_PROVIDER=anthropic, for a hosted one)"
fi

node "$ROOT/dist/main.js" &
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
