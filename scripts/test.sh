#!/usr/bin/env bash
# npm test: the whole suite. Installs what is missing, checks types and lint, runs the unit
# tests, then starts its own Temporal, FerretDB and Redis (on test ports, fresh data) for
# the end-to-end tests, and stops them afterwards.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_node_modules
ensure_system_packages
ensure_temporal
ensure_ferretdb
ensure_python_openai

log "typecheck"; npx tsc -p tsconfig.json --noEmit
log "lint"; npx eslint .
ensure_build

export DATA_DIR="${TEST_DATA_DIR:-$ROOT/.data/test}"
# Test ports (overridable, so two checkouts can run their suites side by side).
export INFRA_TEMPORAL_PORT="${TEST_INFRA_TEMPORAL_PORT:-7244}" INFRA_TEMPORAL_UI_PORT="${TEST_INFRA_TEMPORAL_UI_PORT:-8244}" INFRA_FERRETDB_PORT="${TEST_INFRA_FERRETDB_PORT:-27019}" INFRA_REDIS_PORT="${TEST_INFRA_REDIS_PORT:-6391}"
# Fresh state every run: stop what an earlier run may have left, then wipe its data.
bash "$ROOT/scripts/infra.sh" down
rm -rf "$DATA_DIR"
export TEMPORAL_NAMESPACE=browser-agent
# Sessions are asked to continue-as-new after 300 history events (instead of thousands), so the tests reach it.
export INFRA_TEMPORAL_FLAGS="--dynamic-config-value limit.historyCount.suggestContinueAsNew=300"
trap 'bash "$ROOT/scripts/infra.sh" down' EXIT
bash "$ROOT/scripts/infra.sh" up
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$INFRA_TEMPORAL_PORT" TEST_MONGODB_URL="mongodb://127.0.0.1:$INFRA_FERRETDB_PORT/browser_agent_test" TEST_REDIS_URL="redis://127.0.0.1:$INFRA_REDIS_PORT"

log "jest"
npx jest --ci --maxWorkers=2 "$@" --selectProjects unit e2e
