#!/usr/bin/env bash
# Make sure a C compiler, a C++ compiler and valgrind are present for the C stages of
# `cargo xtask test` (tests/c, the docs/c-abi.md examples, the two-copies test, the
# same programs under valgrind memcheck, and include/hurray.h compiled as C11 and
# C++11). Called by .ci/run. Installs with apt-get when something is missing; what
# is still missing then fails under CI and is a warning otherwise (ci/lib.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
# objdump, readelf, strip: `cargo xtask dist` and its `dist:` stages (glibc floors,
# the static Go binary check, stripped natives).
command -v objdump >/dev/null 2>&1 && command -v strip >/dev/null 2>&1 &&
    command -v readelf >/dev/null 2>&1 || need+=(binutils)

if [ ${#need[@]} -gt 0 ]; then
    ci_apt_install "${need[@]}" || true
    command -v cc >/dev/null 2>&1 || ci_missing "no C compiler (cc); the C stages cannot run"
    command -v c++ >/dev/null 2>&1 || ci_missing "no C++ compiler (c++); the header is checked as C only"
    command -v valgrind >/dev/null 2>&1 || ci_missing "no valgrind; the memcheck stage cannot run"
    command -v objdump >/dev/null 2>&1 || ci_missing "no binutils (objdump, readelf, strip); the dist: stages cannot run"
fi

echo "ci/c.sh: $(cc --version 2>/dev/null | head -n1 || echo 'cc: not installed')"
echo "ci/c.sh: $(c++ --version 2>/dev/null | head -n1 || echo 'c++: not installed')"
echo "ci/c.sh: $(valgrind --version 2>/dev/null || echo 'valgrind: not installed')"
