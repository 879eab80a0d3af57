#!/usr/bin/env bash
# Make sure Go >= 1.24 (runtime.AddCleanup) and a C compiler (cgo) are present for
# the Go binding stages of `cargo xtask test` (bindings/go: gofmt, go vet,
# go test -race, go test -tags hurray_debug, and the module archive checked through
# a file GOPROXY). Called by .ci/run. Tries apt-get when go is missing or too old;
# a failure is only a warning (the stages then skip themselves, or fail naming the
# old version).
set -euo pipefail

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
    echo "ci/go.sh: Go >= 1.24 not found; trying apt-get (golang-go)"
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
        { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq golang-go >/dev/null; } ||
            echo "ci/go.sh: warning: could not install golang-go" >&2
    fi
    go_ok || echo "ci/go.sh: warning: no Go >= 1.24; the Go stages will skip (or report the version)" >&2
fi
if ! command -v cc >/dev/null 2>&1; then
    echo "ci/go.sh: warning: no C compiler; cgo cannot build bindings/go (ci/c.sh installs one)" >&2
fi

echo "ci/go.sh: $(go version 2>/dev/null || echo 'go: not installed')"
