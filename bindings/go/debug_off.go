//go:build !hurray_debug

package hurray

// #include "hurray.h"
import "C"

import "runtime"

// maybeGC does nothing in normal builds; see debug_on.go.
func maybeGC() {}

// viewDebug tracks views under the hurray_debug tag; see debug_on.go. In normal
// builds it is always nil and costs nothing.
type viewDebug struct{}

func (*viewDebug) viewed() {}

// addTensorCleanup registers the cleanup that destroys t's handle p when t becomes
// unreachable without Close.
func addTensorCleanup(t *Tensor, p *C.HurrayTensor) (runtime.Cleanup, *viewDebug) {
	return runtime.AddCleanup(t, destroyTensor, p), nil
}

// addItemCleanup registers the cleanup that destroys it's handle p when it becomes
// unreachable without Close.
func addItemCleanup(it *Item, p *C.HurrayItem) (runtime.Cleanup, *viewDebug) {
	return runtime.AddCleanup(it, destroyItem, p), nil
}
