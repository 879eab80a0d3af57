#!/usr/bin/env bash
# Make sure a C compiler and valgrind are present for the C stages of
# `cargo xtask test` (tests/c, the docs/c-abi.md examples, the two-copies test, and
# the same programs under valgrind memcheck). Called by .ci/run. Installs with
# apt-get, non-interactively; a failure is only a warning (the stages then skip
# themselves with a note).
set -euo pipefail

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)

if [ ${#need[@]} -gt 0 ]; then
    echo "ci/c.sh: installing ${need[*]} with apt-get"
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
        { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; } ||
            echo "ci/c.sh: warning: could not install ${need[*]}; those C stages will be skipped" >&2
    else
        echo "ci/c.sh: warning: no apt-get; missing ${need[*]}: those C stages will be skipped" >&2
    fi
fi

echo "ci/c.sh: $(cc --version 2>/dev/null | head -n1 || echo 'cc: not installed')"
echo "ci/c.sh: $(valgrind --version 2>/dev/null || echo 'valgrind: not installed')"
