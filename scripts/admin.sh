#!/usr/bin/env bash
# npm run admin -- <group> <command> [--flags]: the admin CLI against the configured MongoDB.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_node_modules >&2
ensure_build >&2
exec node "$ROOT/dist/cli/admin.js" "$@"
