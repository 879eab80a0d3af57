//go:build hurray_debug

package hurray

import "runtime"

// maybeGC forces a collection before every handle access under the hurray_debug
// tag, so that a missing runtime.KeepAlive frees a handle mid-call in tests.
func maybeGC() { runtime.GC() }
