#!/usr/bin/env bash
# Make sure Go >= 1.24 (runtime.AddCleanup) and a C compiler (cgo) are present for
# the Go binding stages of `cargo xtask test` (bindings/go: gofmt, go vet,
# go test -race, go test -tags hurray_debug, and the module archive checked through
# a file GOPROXY). Called by .ci/run. Tries apt-get when go is missing or too old;
# what is still missing then fails under CI and is a warning otherwise (ci/lib.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

go_ok() {
    command -v go >/dev/null 2>&1 || return 1
    local v
    v="$(go env GOVERSION 2>/dev/null)" || return 1 # e.g. go1.24.3
    v="${v#go}"
    local major="${v%%.*}" rest="${v#*.}"
    local minor="${rest%%.*}"
    [ "$major" -gt 1 ] || { [ "$major" -eq 1 ] && [ "${minor%%[!0-9]*}" -ge 24 ]; }
}

if ! go_ok; then
    echo "ci/go.sh: Go >= 1.24 not found"
    ci_apt_install golang-go || true
    go_ok || ci_missing "no Go >= 1.24 ($(go version 2>/dev/null || echo 'go: not installed')); the Go stages cannot run"
fi
command -v cc >/dev/null 2>&1 ||
    ci_missing "no C compiler; cgo cannot build bindings/go (ci/c.sh installs one)"

echo "ci/go.sh: $(go version 2>/dev/null || echo 'go: not installed')"
