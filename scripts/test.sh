#!/usr/bin/env bash
# npm test: the whole suite. Installs what is missing, checks types and lint, runs the unit
# tests, then starts its own Temporal, FerretDB and Redis (on test ports, fresh data) for
# the end-to-end tests, and stops them afterwards.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
# What is missing is installed side by side. schemathesis (for the test of the OpenAPI
# document against the server) and the default local model (for the one end-to-end test with
# a real model) may fail to install: their tests are then skipped, saying so.
try_schemathesis() { ensure_schemathesis || true; }
try_model() { ensure_model || true; }
run_steps ensure_node_modules ensure_system_packages ensure_temporal ensure_ferretdb ensure_python_openai try_schemathesis try_model
if schemathesis_ready; then export SCHEMATHESIS_BIN; else log "schemathesis could not be installed: the OpenAPI conformance test is skipped"; export SCHEMATHESIS_BIN=""; fi
# The real-model test runs the weights npm start runs (LLM_QUANT); weights that cannot be made fail the suite.
if model_cached; then TEST_LOCAL_MODEL="$(local_model_path)" || exit 1; export TEST_LOCAL_MODEL; else log "the default model could not be fetched: the real-model test is skipped"; export TEST_LOCAL_MODEL=""; fi

# The type check, lint and the build side by side: each is one process on one core.
log "typecheck, lint and build, side by side"
npx tsc -p tsconfig.json --noEmit & typecheck=$!
npx eslint . & lint=$!
ensure_build
wait "$typecheck" || die "typecheck failed"
wait "$lint" || die "lint failed"

# Unit tests first, two at a time, before the stack is up (they need none of it).
status=0
log "jest: unit tests"
results_dir="$(mktemp -d)"
timeout --kill-after=30s 20m npx jest --ci --maxWorkers=2 --forceExit --passWithNoTests --json --outputFile="$results_dir/unit.json" "$@" --selectProjects unit || status=$?

export DATA_DIR="${TEST_DATA_DIR:-$ROOT/.data/test}"
# Test ports (overridable, so two checkouts can run their suites side by side).
export INFRA_TEMPORAL_PORT="${TEST_INFRA_TEMPORAL_PORT:-7244}" INFRA_TEMPORAL_UI_PORT="${TEST_INFRA_TEMPORAL_UI_PORT:-8244}" INFRA_FERRETDB_PORT="${TEST_INFRA_FERRETDB_PORT:-27019}" INFRA_REDIS_PORT="${TEST_INFRA_REDIS_PORT:-6391}"
# Fresh state every run: stop what an earlier run may have left, then wipe its data.
bash "$ROOT/scripts/infra.sh" down
rm -rf "$DATA_DIR"
export TEMPORAL_NAMESPACE=browser-agent
# Temporal's test config: sessions are asked to continue-as-new after 300 history events (instead of thousands), so the tests reach it.
export INFRA_TEMPORAL_DYNAMIC_CONFIG="$ROOT/temporal/dynamicconfig/test.yaml"
trap 'bash "$ROOT/scripts/infra.sh" down' EXIT
bash "$ROOT/scripts/infra.sh" up
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$INFRA_TEMPORAL_PORT" TEST_MONGODB_URL="mongodb://127.0.0.1:$INFRA_FERRETDB_PORT/browser_agent_test" TEST_REDIS_URL="redis://127.0.0.1:$INFRA_REDIS_PORT"

# End-to-end tests two files at a time (TEST_E2E_WORKERS): most of a file's time is spent
# waiting (for the model's scripted delays, timers, expiries, Temporal's round trips), not on
# the CPU: one file at a time used about 37% of two cores. (A worker process of its own,
# renewed when it grows, keeps a crash from ending the run.)
log "jest: end-to-end tests"
# A run that outlives its budget is stopped, so what it printed is seen rather than lost.
timeout --kill-after=30s "${TEST_E2E_TIMEOUT:-65m}" npx jest --ci --maxWorkers="${TEST_E2E_WORKERS:-2}" --workerIdleMemoryLimit=3GB --forceExit --passWithNoTests --json --outputFile="$results_dir/e2e.json" "$@" --selectProjects e2e || status=$?

# The stack is stopped first, so the closing line is the last one printed.
bash "$ROOT/scripts/infra.sh" down; trap - EXIT

# One closing line over both runs, in the plain form CI reads ("tests: N passed, N failed, N skipped").
# A run that wrote no results (it crashed or was stopped) counts as a failure.
node "$ROOT/scripts/test-summary.js" "$results_dir/unit.json" "$results_dir/e2e.json" || status=1
rm -rf "$results_dir"
exit $status
