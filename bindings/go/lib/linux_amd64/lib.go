// Package linux_amd64 holds the prebuilt hurray-ffi static library for linux/amd64
// (libhurray_ffi.a, placed here by `cargo xtask go build` or shipped in the release
// archive). It has no Go code: this file exists so that `go mod vendor` keeps the
// folder (see ../../includebuild.go).
package linux_amd64
