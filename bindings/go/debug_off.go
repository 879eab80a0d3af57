//go:build !hurray_debug

package hurray

// maybeGC does nothing in normal builds; see maybe_gc_debug.go.
func maybeGC() {}
