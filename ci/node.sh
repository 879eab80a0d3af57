#!/usr/bin/env bash
# Make sure Node.js >= 18 (and npm) are present for the Node binding stages of
# `cargo xtask test` (bindings/node: build the napi-rs addon, check the generated
# native.d.ts, type-check it, node --test). Called by .ci/run. Tries apt-get when
# node or npm is missing or node is too old; a failure is only a warning (the stages
# then skip themselves with a note). The tests need no npm packages; the type check
# installs typescript and @types/node, pinned in bindings/node/package-lock.json,
# with `npm ci` (and skips without npm).
set -euo pipefail

node_ok() {
    command -v node >/dev/null 2>&1 || return 1
    local v
    v="$(node --version 2>/dev/null)" || return 1 # e.g. v20.20.2
    v="${v#v}"
    [ "${v%%.*}" -ge 18 ]
}

if ! node_ok || ! command -v npm >/dev/null 2>&1; then
    echo "ci/node.sh: Node.js >= 18 with npm not found; trying apt-get (nodejs npm)"
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
        { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null; } ||
            echo "ci/node.sh: warning: could not install nodejs/npm" >&2
    fi
    node_ok || echo "ci/node.sh: warning: no Node.js >= 18; the Node stages will skip" >&2
    command -v npm >/dev/null 2>&1 || echo "ci/node.sh: warning: no npm; the type check stage will skip" >&2
fi

echo "ci/node.sh: node $(node --version 2>/dev/null || echo 'not installed'), npm $(npm --version 2>/dev/null || echo 'not installed')"
