//go:build !cgo

package hurray

// This package is a layer over the Hurray C library (include/hurray.h and the
// prebuilt static libhurray_ffi.a), so it needs cgo. With CGO_ENABLED=0 the cgo
// files are left out, and without this file the build would fail on some missing
// identifier far from the cause. The undefined name below makes the compiler's
// error say the reason instead.
//
// Fix: build with CGO_ENABLED=1 and a C compiler (gcc or clang) on PATH.
var _ = hurray_requires_cgo_set_CGO_ENABLED_1_and_install_a_C_compiler
