#!/usr/bin/env bash
# npm run bench: benchmarks on the real stack (own Temporal, FerretDB, Redis on bench ports); prints JSON.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
# What is missing is installed side by side (run_steps prints on stderr only).
run_steps ensure_app ensure_system_packages ensure_temporal ensure_ferretdb
# The model bench replays agent requests against the local default model (skipped, saying so, without it).
if model_cached; then BENCH_MODEL="$(local_model_path)" && export BENCH_MODEL; fi
export DATA_DIR="$ROOT/.data/bench"
OUT_DIR="$ROOT/.data/bench-results"
rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
export INFRA_TEMPORAL_PORT=7254 INFRA_TEMPORAL_UI_PORT=8254 INFRA_FERRETDB_PORT=27029 INFRA_REDIS_PORT=6392
trap 'bash "$ROOT/scripts/infra.sh" down >&2' EXIT
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$INFRA_TEMPORAL_PORT" TEST_MONGODB_URL="mongodb://127.0.0.1:$INFRA_FERRETDB_PORT/browser_agent_bench" TEST_REDIS_URL="redis://127.0.0.1:$INFRA_REDIS_PORT"
export BENCH_OUT="$OUT_DIR/agent-step.json" BENCH_LIVE_OUT="$OUT_DIR/live.json" BENCH_SCHEMA_OUT="$OUT_DIR/schema-health.json" BENCH_BLOB_OUT="$OUT_DIR/blob-read.json" BENCH_HISTORY_OUT="$OUT_DIR/history-size.json" BENCH_REPLAY_OUT="$OUT_DIR/replay.json" BENCH_CONCURRENCY_OUT="$OUT_DIR/concurrency.json" BENCH_STORE_OUT="$OUT_DIR/store-growth.json" BENCH_IDLE_OUT="$OUT_DIR/idle-memory.json" BENCH_MODEL_OUT="$OUT_DIR/model-speed.json" BENCH_CAPACITY_OUT="$OUT_DIR/capacity.json" BENCH_SOAK_OUT="$OUT_DIR/soak.json"
# Each bench on a stack of its own, started fresh: no bench measures what the one before it
# left running or stored (one FerretDB serving all of them in a row ended up refusing to
# open new databases).
failed=0
for bench in bench/*.bench.ts; do
  bash "$ROOT/scripts/infra.sh" down >&2
  rm -rf "$DATA_DIR"
  bash "$ROOT/scripts/infra.sh" up >&2
  npx jest --selectProjects bench --runInBand -- "$bench" >&2 || failed=1
done
node -e 'const fs=require("fs");const r=f=>fs.existsSync(f)?JSON.parse(fs.readFileSync(f,"utf8")):null;console.log(JSON.stringify({agentStep:r(process.argv[1]),live:r(process.argv[2]),schemaHealth:r(process.argv[3]),blobRead:r(process.argv[4]),historySize:r(process.argv[5]),replay:r(process.argv[6]),concurrency:r(process.argv[7]),storeGrowth:r(process.argv[8]),idleMemory:r(process.argv[9]),modelSpeed:r(process.argv[10]),capacity:r(process.argv[11]),soak:r(process.argv[12])},null,2))' "$BENCH_OUT" "$BENCH_LIVE_OUT" "$BENCH_SCHEMA_OUT" "$BENCH_BLOB_OUT" "$BENCH_HISTORY_OUT" "$BENCH_REPLAY_OUT" "$BENCH_CONCURRENCY_OUT" "$BENCH_STORE_OUT" "$BENCH_IDLE_OUT" "$BENCH_MODEL_OUT" "$BENCH_CAPACITY_OUT" "$BENCH_SOAK_OUT"
exit "$failed"
