#!/usr/bin/env bash
# Make sure a Rust toolchain with rustfmt and clippy is present, then print versions.
# Called by .ci/run. Installs rustup (minimal profile) only when cargo is missing.
# Missing rustfmt or clippy fails under CI and is a warning otherwise (ci/lib.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$cargo_bin:$PATH"

if ! command -v cargo >/dev/null 2>&1; then
    echo "ci/rust.sh: cargo not found; installing Rust with rustup (minimal profile)"
    if ! command -v curl >/dev/null 2>&1; then
        echo "ci/rust.sh: error: neither cargo nor curl is available" >&2
        exit 1
    fi
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
        | sh -s -- -y --profile minimal --no-modify-path
fi

if command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy ||
        echo "ci/rust.sh: rustup could not add rustfmt/clippy" >&2
else
    echo "ci/rust.sh: rustup not found; using the cargo on PATH as it is" >&2
fi
cargo fmt --version >/dev/null 2>&1 || ci_missing "no rustfmt (cargo fmt); the fmt stage cannot run"
cargo clippy --version >/dev/null 2>&1 || ci_missing "no clippy (cargo clippy); the clippy stage cannot run"

echo "ci/rust.sh: tool versions"
rustc --version
cargo --version
cargo fmt --version 2>/dev/null || echo "rustfmt: not installed"
cargo clippy --version 2>/dev/null || echo "clippy: not installed"
