#!/usr/bin/env bash
# Make sure Node.js >= 18 (and npm) are present for the Node binding stages of
# `cargo xtask test` (bindings/node: build the napi-rs addon, check the generated
# native.d.ts, type-check it, node --test). Called by .ci/run. Tries apt-get when
# node or npm is missing or node is too old; what is still missing then fails under
# CI and is a warning otherwise (ci/lib.sh). The tests need no npm packages; the type
# check installs typescript and @types/node, pinned in bindings/node/package-lock.json,
# with `npm ci`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

node_ok() {
    command -v node >/dev/null 2>&1 || return 1
    local v
    v="$(node --version 2>/dev/null)" || return 1 # e.g. v20.20.2
    v="${v#v}"
    [ "${v%%.*}" -ge 18 ]
}

if ! node_ok || ! command -v npm >/dev/null 2>&1; then
    echo "ci/node.sh: Node.js >= 18 with npm not found"
    ci_apt_install nodejs npm || true
    node_ok || ci_missing "no Node.js >= 18; the Node stages cannot run"
    command -v npm >/dev/null 2>&1 || ci_missing "no npm; the Node type check stage cannot run"
fi

echo "ci/node.sh: node $(node --version 2>/dev/null || echo 'not installed'), npm $(npm --version 2>/dev/null || echo 'not installed')"
