#!/usr/bin/env bash
# npm run bench: benchmarks on the real stack; prints JSON.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_node_modules
ensure_system_packages
ensure_temporal
ensure_ferretdb
ensure_build
export DATA_DIR="$ROOT/.data/bench"
rm -rf "$DATA_DIR"
export INFRA_TEMPORAL_PORT=7254 INFRA_TEMPORAL_UI_PORT=8254 INFRA_FERRETDB_PORT=27029 INFRA_REDIS_PORT=6392
trap 'bash "$ROOT/scripts/infra.sh" down >&2' EXIT
bash "$ROOT/scripts/infra.sh" up >&2
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$INFRA_TEMPORAL_PORT" TEST_MONGODB_URL="mongodb://127.0.0.1:$INFRA_FERRETDB_PORT/browser_agent_bench" TEST_REDIS_URL="redis://127.0.0.1:$INFRA_REDIS_PORT"
node -r @swc-node/register "$ROOT/bench/run.ts" 2>/dev/null || npx jest --selectProjects bench --runInBand --silent=false
