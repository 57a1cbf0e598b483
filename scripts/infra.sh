#!/usr/bin/env bash
# Local infrastructure: Temporal dev server (SQLite), FerretDB (SQLite), Redis.
#   scripts/infra.sh up | down | status
# Environment: DATA_DIR (default ./.data), INFRA_* ports (below), INFRA_TEMPORAL_DYNAMIC_CONFIG
# (a file of temporal/dynamicconfig/, development.yaml by default), MONGODB_URL (when set,
# the embedded FerretDB is not started), SKIP_REDIS/SKIP_TEMPORAL similarly via REDIS_URL/TEMPORAL_ADDRESS.
source "$(dirname "$0")/lib.sh"

DATA_DIR="${DATA_DIR:-$ROOT/.data}"
RUN_DIR="$DATA_DIR/run"; LOG_DIR="$DATA_DIR/logs"
TEMPORAL_PORT="${INFRA_TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${INFRA_TEMPORAL_UI_PORT:-8233}"
FERRETDB_PORT="${INFRA_FERRETDB_PORT:-27018}"
REDIS_PORT="${INFRA_REDIS_PORT:-6390}"
NAMESPACE="${TEMPORAL_NAMESPACE:-browser-agent}"
SEARCH_ATTRIBUTES=(OwnerUserId SessionStatus TriggerId)
# Temporal's own files live in temporal/: namespace setup, dynamic config, recorded histories.
DYNAMIC_CONFIG="${INFRA_TEMPORAL_DYNAMIC_CONFIG:-$ROOT/temporal/dynamicconfig/development.yaml}"
mkdir -p "$RUN_DIR" "$LOG_DIR"

# Dynamic config: Temporal's YAML format (temporal/dynamicconfig/), each plain `key: - value: v`
# entry handed to the dev server as --dynamic-config-value key=v.
dynamic_config_flags() {
  [ -f "$1" ] || die "no dynamic config file $1"
  awk '
    /^[[:space:]]*(#|$)/ { next }
    /^[^[:space:]-][^:]*:[[:space:]]*$/ { key = $0; sub(/:[[:space:]]*$/, "", key); next }
    /^[[:space:]]*-[[:space:]]*value:/ { v = $0; sub(/^[[:space:]]*-[[:space:]]*value:[[:space:]]*/, "", v); sub(/[[:space:]]+#.*$/, "", v); print "--dynamic-config-value"; print key "=" v }
  ' "$1"
}

temporal_up() {
  ensure_temporal
  if ! port_open 127.0.0.1 "$TEMPORAL_PORT"; then
    local dyn=(); mapfile -t dyn < <(dynamic_config_flags "$DYNAMIC_CONFIG")
    start_bg temporal "$LOG_DIR/temporal.log" "$RUN_DIR/temporal.pid" \
      "$TEMPORAL_BIN" server start-dev --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
      --db-filename "$DATA_DIR/temporal.sqlite" --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
      --log-level warn --namespace "$NAMESPACE" "${dyn[@]}" ${INFRA_TEMPORAL_FLAGS:-}
  fi
  wait_for "Temporal" 60 "$LOG_DIR/temporal.log" "$TEMPORAL_BIN" operator cluster health --address "127.0.0.1:$TEMPORAL_PORT"
  TEMPORAL_CLI="$TEMPORAL_BIN" TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT" NAMESPACE="$NAMESPACE" \
    SEARCH_ATTRIBUTES="${SEARCH_ATTRIBUTES[*]}" SETUP_TRIES=15 bash "$ROOT/temporal/setup.sh" >>"$LOG_DIR/temporal-setup.log" \
    || die "Temporal namespace setup failed (see $LOG_DIR/temporal-setup.log)"
  log "Temporal ready at 127.0.0.1:$TEMPORAL_PORT (namespace $NAMESPACE), UI at http://localhost:$TEMPORAL_UI_PORT"
}

ferretdb_up() {
  if ! port_open 127.0.0.1 "$FERRETDB_PORT"; then
    ensure_ferretdb
    # SQLite keeps its write-ahead log at the largest size it ever reached; this has it cut
    # back after each checkpoint, so the files on disk follow the records' retention.
    local wal_limit=$((4 * 1024 * 1024))
    mkdir -p "$DATA_DIR/ferretdb"
    DO_NOT_TRACK=1 start_bg ferretdb "$LOG_DIR/ferretdb.log" "$RUN_DIR/ferretdb.pid" \
      "$BIN_DIR/ferretdb" --listen-addr "127.0.0.1:$FERRETDB_PORT" --sqlite-url "file:$DATA_DIR/ferretdb/?_pragma=journal_size_limit($wal_limit)"
  fi
  wait_for "FerretDB" 30 "$LOG_DIR/ferretdb.log" port_open 127.0.0.1 "$FERRETDB_PORT"
  log "FerretDB ready at mongodb://127.0.0.1:$FERRETDB_PORT"
}

redis_up() {
  if ! port_open 127.0.0.1 "$REDIS_PORT"; then
    mkdir -p "$DATA_DIR/redis"
    start_bg redis "$LOG_DIR/redis.log" "$RUN_DIR/redis.pid" \
      redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --databases 32 --dir "$DATA_DIR/redis" --save "" --appendonly no --stop-writes-on-bgsave-error no --daemonize no
  fi
  wait_for "Redis" 20 "$LOG_DIR/redis.log" redis-cli -p "$REDIS_PORT" ping
  log "Redis ready at redis://127.0.0.1:$REDIS_PORT"
}

case "${1:-up}" in
  up)
    ensure_system_packages
    redis_up
    if [ -z "${EXTERNAL_MONGODB:-}" ]; then ferretdb_up; fi
    temporal_up
    ;;
  down)
    stop_pidfile temporal "$RUN_DIR/temporal.pid"
    stop_pidfile ferretdb "$RUN_DIR/ferretdb.pid"
    stop_pidfile redis "$RUN_DIR/redis.pid"
    stop_port temporal "$TEMPORAL_PORT" temporal
    stop_port ferretdb "$FERRETDB_PORT" ferretdb
    stop_port redis "$REDIS_PORT" redis-server
    ;;
  status)
    for p in "temporal $TEMPORAL_PORT" "ferretdb $FERRETDB_PORT" "redis $REDIS_PORT"; do
      set -- $p; if port_open 127.0.0.1 "$2"; then echo "$1: up ($2)"; else echo "$1: down ($2)"; fi
    done
    ;;
  *) die "usage: infra.sh up|down|status" ;;
esac
