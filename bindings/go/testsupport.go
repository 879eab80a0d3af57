package hurray

// Test support: cgo cannot be used in _test.go files, so the C-side helpers the
// tests need live here, unexported.

// #include "hurray.h"
// #include "hurray_go.h"
import "C"

import "unsafe"

// destroyTensorOnCThread destroys a detached HurrayTensor* on a new C thread
// (pthread), so that its release callbacks run on a thread Go did not create.
func destroyTensorOnCThread(handle unsafe.Pointer) Status {
	return Status(C.hurray_go_destroy_tensor_on_c_thread((*C.HurrayTensor)(handle)))
}

// destroyItemOnCThread takes it's handle (it is closed afterwards) and destroys it
// on a new C thread.
func destroyItemOnCThread(it *Item) Status {
	it.mu.Lock()
	p := it.ptr
	it.forget()
	it.mu.Unlock()
	return Status(C.hurray_go_destroy_item_on_c_thread(p))
}

// noopCgoCall is an empty cgo call: the baseline of the per-call cost benchmark.
func noopCgoCall() { C.hurray_go_noop() }

// rawHeaderCall is hurray_descriptor_header on t's descriptor with no wrapper
// (benchmark support).
func rawHeaderCall(t *Tensor) {
	var h C.HurrayDescriptorHeader
	C.hurray_descriptor_header(t.desc, &h)
}
