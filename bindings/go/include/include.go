// Package include holds hurray.h, a copy of the repository's include/hurray.h (the
// one C ABI) that cgo compiles against. `cargo xtask go build` refreshes it and
// `cargo xtask test` fails when it drifts. It has no Go code: this file exists so
// that `go mod vendor` keeps the folder (see ../includebuild.go).
package include
