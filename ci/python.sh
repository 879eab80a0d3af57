#!/usr/bin/env bash
# Make sure a CPython >= 3.10 with venv and pip (and a C compiler, for the native
# protocol's C-consumer test) is present for the Python binding stages of
# `cargo xtask test`. Called by .ci/run. The stages build their own venv under
# target/py-venv (numpy, pytest, maturin, scipy, and for issue 14's tests and
# benchmark ml_dtypes, jax and safetensors; for the scale-out stage of issue 19 Dask,
# distributed and Ray; all from PyPI: xtask/src/python.rs). Tries apt-get when
# something is missing; what is still missing then fails under CI and is a warning
# otherwise (ci/lib.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

have_python() {
    command -v python3 >/dev/null 2>&1 &&
        python3 -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null
}

if ! have_python; then
    echo "ci/python.sh: python3 >= 3.10 with venv not found"
    ci_apt_install python3 python3-venv python3-dev || true
    have_python || ci_missing "no python3 >= 3.10 with venv; the Python stages cannot run"
fi
if ! command -v cc >/dev/null 2>&1; then
    ci_apt_install gcc libc6-dev || true
    command -v cc >/dev/null 2>&1 || ci_missing "no C compiler; the C-consumer test cannot run"
fi

echo "ci/python.sh: $(python3 --version 2>&1 || echo 'python3: not installed')"
