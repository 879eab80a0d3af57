//go:build hurray_debug

package hurray

// #include "hurray.h"
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
)

// maybeGC forces a collection before every handle access under the hurray_debug
// tag, so that a missing runtime.KeepAlive frees a handle mid-call in tests.
func maybeGC() { runtime.GC() }

// viewDebug records, under the hurray_debug tag, whether a Tensor (or an Item,
// for the tensors it lends) handed out an unsafe view of library memory
// (UnsafeBytes, UnsafeValues, UnsafeBufferValues). When such an object is
// garbage-collected without Close, its cleanup counts it in danglingViews and
// prints a warning once: any unsafe view still in use after that point reads
// freed memory (see "Views" in the package documentation). Copies and scoped
// views cannot dangle and are not recorded.
type viewDebug struct{ views atomic.Bool }

func (d *viewDebug) viewed() {
	if d != nil {
		d.views.Store(true)
	}
}

// danglingViews counts objects collected without Close after handing out views
// (hurray_debug builds only).
var (
	danglingViews     atomic.Int64
	danglingViewsOnce atomic.Bool
)

func (d *viewDebug) collected(what string) {
	if !d.views.Load() {
		return
	}
	danglingViews.Add(1)
	if danglingViewsOnce.CompareAndSwap(false, true) {
		fmt.Fprintf(os.Stderr, "hurray (hurray_debug): a %s that handed out unsafe views (UnsafeBytes, UnsafeValues, UnsafeBufferValues) "+
			"was garbage-collected without Close; an unsafe view used after this point reads freed memory. "+
			"Keep it reachable while such views are in use (runtime.KeepAlive), or Close it after their last use; "+
			"or use the scoped views (WithBytes, WithFloat32s, WithValues, ...) or copies instead.\n", what)
	}
}

type tensorCleanup struct {
	p   *C.HurrayTensor
	dbg *viewDebug
}

type itemCleanup struct {
	p   *C.HurrayItem
	dbg *viewDebug
}

func addTensorCleanup(t *Tensor, p *C.HurrayTensor) (runtime.Cleanup, *viewDebug) {
	d := &viewDebug{}
	c := runtime.AddCleanup(t, func(a tensorCleanup) {
		a.dbg.collected("Tensor")
		destroyTensor(a.p)
	}, tensorCleanup{p, d})
	return c, d
}

func addItemCleanup(it *Item, p *C.HurrayItem) (runtime.Cleanup, *viewDebug) {
	d := &viewDebug{}
	c := runtime.AddCleanup(it, func(a itemCleanup) {
		a.dbg.collected("Item")
		destroyItem(a.p)
	}, itemCleanup{p, d})
	return c, d
}
