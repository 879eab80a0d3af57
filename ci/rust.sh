#!/usr/bin/env bash
# Make sure a Rust toolchain with rustfmt and clippy is present, then print versions.
# Called by .ci/run. Installs rustup (minimal profile) only when cargo is missing.
set -euo pipefail

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
    rustup component add rustfmt clippy \
        || echo "ci/rust.sh: warning: could not add rustfmt/clippy; those stages will be skipped" >&2
else
    echo "ci/rust.sh: warning: rustup not found; using the cargo on PATH as it is" >&2
fi

echo "ci/rust.sh: tool versions"
rustc --version
cargo --version
cargo fmt --version 2>/dev/null || echo "rustfmt: not installed"
cargo clippy --version 2>/dev/null || echo "clippy: not installed"
