#!/usr/bin/env bash
# Records the histories the replay test (src/workflows/replay.test.ts) replays: starts the
# test stack (as npm test does, on the test ports), runs the end-to-end tests that produce
# each kind of workflow, then writes one history of each kind to temporal/histories/.
#   bash temporal/record-histories.sh        # TEST_INFRA_* ports as for npm test
#   RECORD_KINDS=session-hibernated RECORD_SCENARIOS='frees the browser' RECORD_FILES=test/e2e/hibernation.test.ts \
#     bash temporal/record-histories.sh      # one kind only (the other files are kept)
# Review the diff and commit the files. Refresh them when a workflow changes on purpose in a
# way that running workflows cannot follow (guarded by wf.patched, or a new workflow type).
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
ensure_node_modules
ensure_temporal
ensure_ferretdb
ensure_build

export DATA_DIR="${TEST_DATA_DIR:-$ROOT/.data/record}"
export INFRA_TEMPORAL_PORT="${TEST_INFRA_TEMPORAL_PORT:-7244}" INFRA_TEMPORAL_UI_PORT="${TEST_INFRA_TEMPORAL_UI_PORT:-8244}" INFRA_FERRETDB_PORT="${TEST_INFRA_FERRETDB_PORT:-27019}" INFRA_REDIS_PORT="${TEST_INFRA_REDIS_PORT:-6391}"
bash "$ROOT/scripts/infra.sh" down
rm -rf "$DATA_DIR"
export TEMPORAL_NAMESPACE=browser-agent INFRA_TEMPORAL_DYNAMIC_CONFIG="$ROOT/temporal/dynamicconfig/test.yaml"
trap 'bash "$ROOT/scripts/infra.sh" down' EXIT
bash "$ROOT/scripts/infra.sh" up
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$INFRA_TEMPORAL_PORT" TEST_MONGODB_URL="mongodb://127.0.0.1:$INFRA_FERRETDB_PORT/browser_agent_test" TEST_REDIS_URL="redis://127.0.0.1:$INFRA_REDIS_PORT"

# The scenarios: a session with tasks, a guardrail, continue-as-new, a takeover, a worker lost
# and restored; a trigger run with its webhook delivery; a task webhook; a chat reach-out.
log "running the scenarios"
npx jest --ci --maxWorkers=2 --selectProjects e2e \
  -t "${RECORD_SCENARIOS:-fills and submits a form|asks a human through a guardrail|continues a long session as new|hands the browser to a human and back|restores a session on another worker|runs an at trigger on time|run-task delivers the full response|sends a guardrail once to Telegram|frees the browser of a task waiting for a person}" \
  ${RECORD_FILES:-test/e2e/tasks.test.ts test/e2e/live-channel.test.ts test/e2e/triggers.test.ts test/e2e/webhooks.test.ts test/e2e/reach-out.test.ts test/e2e/hibernation.test.ts} \
  || log "some scenario tests failed; recording what ran"
log "recording histories"
# Sessions a test left open (e.g. the one restored on another worker) are closed first.
"$TEMPORAL_BIN" workflow terminate --address "$TEST_TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" \
  --query 'ExecutionStatus="Running"' --reason "recording histories" --yes >/dev/null 2>&1 || true
TEMPORAL_ADDRESS="$TEST_TEMPORAL_ADDRESS" PAYLOAD_KEY_FILE="$DATA_DIR/payload.key" node "$ROOT/temporal/record-histories.mjs"
