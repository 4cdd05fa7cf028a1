# Shared set-up for scripts/run and scripts/test: install what is missing,
# skip what is present. Sourced, not run.

say() { printf '\033[1m==> [%dm%02ds] %s\033[0m\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    say "need root to run: $*"; return 1
  fi
}

apt_install() {
  say "installing $* (Debian packages)"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

ensure_rust() {
  command -v cargo >/dev/null || { say "cargo not found: install Rust with rustup first"; exit 1; }
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
  if ! rustup which clippy-driver >/dev/null 2>&1; then
    say "adding clippy"
    rustup component add clippy
  fi
}

# Makes every cargo build that follows lint the workspace's own crates
# with clippy as it compiles them (warnings are errors), the way `cargo
# clippy` does it but in the same build as the tests: each crate is
# compiled once, not once to check and again to test. Dependencies are
# compiled by plain rustc, as always.
lint_while_building() {
  RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver)
  CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings"
  export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
}

ensure_chromium() {
  if [ -n "${HEDDLE_CHROMIUM:-}" ] && [ -x "$HEDDLE_CHROMIUM" ]; then return; fi
  [ -x /usr/bin/chromium ] || apt_install chromium
  export HEDDLE_CHROMIUM=/usr/bin/chromium
}

# The end-to-end tests' browser: Debian's headless shell of the same
# Chromium, without the full browser's windowing and UI processes. The
# suite used 310 s of CPU in the full browser and 226 s in the shell
# (2026-11-27); scripts/bench-browser keeps the full one.
ensure_headless_chromium() {
  if [ -n "${HEDDLE_CHROMIUM:-}" ] && [ -x "$HEDDLE_CHROMIUM" ]; then return; fi
  [ -x /usr/bin/chromium-headless-shell ] || apt_install chromium-headless-shell
  export HEDDLE_CHROMIUM=/usr/bin/chromium-headless-shell
}

ensure_node() {
  command -v npm >/dev/null || apt_install nodejs npm
}

ensure_e2e_packages() {
  ensure_node
  local dir=end2end
  # Reinstall only when the lockfile changed since the last install.
  if [ ! -f "$dir/node_modules/.package-lock.json" ] \
    || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "installing end2end/ npm packages (no browser download)"
    (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# PostgreSQL for the test suite's second pass: Debian's server and
# pg_virtualenv (postgresql-common), which runs a command against a
# throw-away cluster on a free port and drops it afterwards.
ensure_postgres() {
  command -v pg_virtualenv >/dev/null || apt_install postgresql
}

# Runs `cargo test` with the arguments given, echoing its output, and
# prints how many tests passed under the label $1.
# Returns cargo's status itself, so a caller may act on a failure (under
# `if !` or `||`, `set -e` would not stop at it).
count_tests() {
  local label=$1 log status=0
  shift
  log=$(mktemp)
  cargo test "$@" 2>&1 | tee "$log" || status=$?
  if [ "$status" = 0 ]; then
    say "$label: $(awk '/^test result:/ {passed += $4} END {print passed + 0}' "$log") tests passed"
  else
    say "$label: a test or its build failed"
  fi
  rm -f "$log"
  return "$status"
}

# schemathesis (PyPI), the API fuzzer scripts/api-contract runs, in a
# virtualenv under target/ so it is installed once per checkout.
SCHEMATHESIS_VERSION=4.32.5
ensure_schemathesis() {
  local venv=target/schemathesis
  if [ "$("$venv/bin/st" --version 2>/dev/null | grep -o '[0-9.]*$')" = "$SCHEMATHESIS_VERSION" ]; then
    return
  fi
  say "installing schemathesis $SCHEMATHESIS_VERSION"
  python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv && python3 -m venv "$venv"; }
  "$venv/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION"
}

# The official `openai` Python client (PyPI), which the tests drive
# against Heddle's OpenAI-compatible endpoints, in a virtualenv under
# target/ (server/tests/server/openai_client.rs runs it from there).
OPENAI_CLIENT_VERSION=3.54.0
ensure_openai_client() {
  local venv=target/openai-client
  if [ "$("$venv/bin/python" -c 'import openai; print(openai.__version__)' 2>/dev/null)" = "$OPENAI_CLIENT_VERSION" ]; then
    return
  fi
  say "installing the openai Python client $OPENAI_CLIENT_VERSION"
  python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv && python3 -m venv "$venv"; }
  "$venv/bin/pip" install --quiet "openai==$OPENAI_CLIENT_VERSION"
}

# nginx (Debian), which the tests run in front of two servers with the
# example configuration in deploy/nginx/.
# Only the binary is needed (the test starts its own nginx): a package
# script that fails to start the system's service does not matter.
ensure_nginx() {
  command -v nginx >/dev/null && return
  apt_install nginx-light || true
  command -v nginx >/dev/null || { say "nginx could not be installed"; exit 1; }
}
