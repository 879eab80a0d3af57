# Sourced by ci/*.sh (not run on its own): the strict-CI rule and the apt-get
# install, written once.
#
# With CI set (to anything but empty, 0 or false, the rule of `cargo xtask test`), a
# toolchain piece that is still missing after the install attempt is an error: the
# script exits 1 naming itself and the piece, so .ci/run stops there. Without CI it
# is a warning, and the stages of `cargo xtask test` that need it skip with a note.

ci_script="ci/$(basename "$0")"

# Whether CI is set to something other than empty, 0 or false (any case).
ci_strict() {
    local v="${CI:-}"
    v="$(printf %s "$v" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')"
    [ -n "$v" ] && [ "$v" != 0 ] && [ "$v" != false ]
}

# ci_missing MESSAGE: under CI, print an error naming this script and exit 1;
# otherwise print a warning and go on.
ci_missing() {
    if ci_strict; then
        echo "$ci_script: error: $1 (CI=$CI: a missing toolchain fails the run; CI=false allows it)" >&2
        exit 1
    fi
    echo "$ci_script: warning: $1" >&2
}

# ci_apt_install PACKAGE...: apt-get update and install, non-interactively, with
# sudo when not root. Returns non-zero (after a note) when there is no apt-get or
# the install fails; the caller then checks what it needs and calls ci_missing.
ci_apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$ci_script: no apt-get to install $*" >&2
        return 1
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
    echo "$ci_script: installing $* with apt-get"
    { $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null; } || {
        echo "$ci_script: apt-get could not install $*" >&2
        return 1
    }
}
