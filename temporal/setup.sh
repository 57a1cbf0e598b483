#!/usr/bin/env bash
# Creates the service's Temporal namespace and its Keyword search attributes, tolerating
# "already exists"; safe to run again. Used by scripts/infra.sh (npm start, npm test) and by
# the temporal-setup container of docker-compose.yml (which mounts this folder).
# Environment:
#   TEMPORAL_ADDRESS     host:port of the frontend (required)
#   NAMESPACE            namespace to create (required)
#   NAMESPACE_RETENTION  retention of closed workflows (default 72h)
#   SEARCH_ATTRIBUTES    space-separated names of the Keyword search attributes (required)
#   TEMPORAL_CLI         the temporal CLI (default: temporal on PATH)
#   SETUP_TRIES          tries of each step, 2 s apart (default 60)
set -euo pipefail
: "${TEMPORAL_ADDRESS:?set TEMPORAL_ADDRESS}" "${NAMESPACE:?set NAMESPACE}" "${SEARCH_ATTRIBUTES:?set SEARCH_ATTRIBUTES}"
NAMESPACE_RETENTION="${NAMESPACE_RETENTION:-72h}"
cli="${TEMPORAL_CLI:-temporal}"
tries="${SETUP_TRIES:-60}"
addr=(--address "$TEMPORAL_ADDRESS")

retry() { local n=0; until "$@"; do n=$((n + 1)); [ "$n" -ge "$tries" ] && return 1; sleep 2; done; }

retry "$cli" operator cluster health "${addr[@]}" >/dev/null
if "$cli" operator namespace describe "${addr[@]}" --namespace "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE already exists"
else
  out="$("$cli" operator namespace create "${addr[@]}" --namespace "$NAMESPACE" --retention "$NAMESPACE_RETENTION" 2>&1)" \
    || grep -qiE 'already (exists|registered)' <<<"$out" \
    || { echo "$out" >&2; exit 1; }
  echo "namespace $NAMESPACE created"
fi
# A new namespace becomes usable once the server's namespace cache has refreshed.
retry "$cli" operator search-attribute list "${addr[@]}" --namespace "$NAMESPACE" >/dev/null

create_sa() {
  local existing out
  existing="$("$cli" operator search-attribute list "${addr[@]}" --namespace "$NAMESPACE" 2>/dev/null || true)"
  if grep -qw "$1" <<<"$existing"; then
    grep -w "$1" <<<"$existing" | grep -qi keyword \
      || { echo "search attribute $1 exists with a type other than Keyword" >&2; exit 1; }
    echo "search attribute $1 already exists"; return 0
  fi
  out="$("$cli" operator search-attribute create "${addr[@]}" --namespace "$NAMESPACE" --name "$1" --type Keyword 2>&1)" && { echo "search attribute $1 created"; return 0; }
  if grep -qi 'different type' <<<"$out"; then echo "$out" >&2; exit 1; fi
  grep -qi 'already exists' <<<"$out" && return 0
  echo "$out" >&2; return 1
}
for sa in $SEARCH_ATTRIBUTES; do retry create_sa "$sa"; done
echo "Temporal namespace $NAMESPACE is ready"
