//go:build hurray_testsupport

package hurray

// Test support: cgo cannot be used in _test.go files, so the C-side helpers that
// some tests need live here and in testsupport.c, unexported, behind the
// hurray_testsupport build tag: a build without the tag (every program using the
// package) contains none of it. The tests that use them (testsupport_test.go) run
// with `go test -tags hurray_testsupport`, as `cargo xtask test` does.

/*
#include "hurray.h"

// Defined in testsupport.c. Destroy a tensor (or an item) on a new C thread
// (pthread) and wait for it, so that release callbacks run on a thread Go did not
// create; return the destroy status, or HURRAY_ERR_IO when the thread cannot start.
HurrayStatus hurray_go_destroy_tensor_on_c_thread(HurrayTensor *tensor);
HurrayStatus hurray_go_destroy_item_on_c_thread(HurrayItem *item);
// An empty C function: the baseline of the per-call cost benchmark.
void hurray_go_noop(void);
*/
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
	if err := it.move("destroyItemOnCThread", "is closed"); err != nil {
		panic(err)
	}
	it.cleanup.Stop()
	return Status(C.hurray_go_destroy_item_on_c_thread(it.ptr))
}

// noopCgoCall is an empty cgo call: the baseline of the per-call cost benchmark.
func noopCgoCall() { C.hurray_go_noop() }

// rawViewCall is hurray_descriptor_view on t's descriptor with no wrapper
// (benchmark support).
func rawViewCall(t *Tensor) {
	var v *C.HurrayDescriptorView
	C.hurray_descriptor_view(t.desc, &v)
}
