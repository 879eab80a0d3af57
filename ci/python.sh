#!/usr/bin/env bash
# Make sure a CPython >= 3.10 with venv and pip (and a C compiler, for the native
# protocol's C-consumer test) is present for the Python binding stages of
# `cargo xtask test`. Called by .ci/run. The stages build their own venv under
# target/py-venv (numpy, pytest, maturin, scipy from PyPI).
set -euo pipefail

have_python() {
    command -v python3 >/dev/null 2>&1 &&
        python3 -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null
}

if ! have_python; then
    echo "ci/python.sh: python3 >= 3.10 with venv not found; installing it with apt-get"
    if command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-dev >/dev/null
    else
        echo "ci/python.sh: warning: no apt-get; the Python stages will skip themselves" >&2
    fi
fi
if ! command -v cc >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null ||
        echo "ci/python.sh: warning: no C compiler; the C-consumer test will skip" >&2
fi

echo "ci/python.sh: $(python3 --version 2>&1 || echo 'python3: not installed')"
