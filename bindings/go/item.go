package hurray

// #include "hurray.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync"
)

// Item is what a container yields: one tensor, or a composite (a head tensor and
// its ordered members, each an Item, possibly nested).
//
// An Item returned by a reader, or made by [NewItem] or [NewComposite], owns its
// tensors: the Tensors and member Items it returns are borrowed and valid until
// the Item is closed. Close is idempotent; a cleanup releases an Item that becomes
// unreachable without Close. Member Items are closed with their root only.
type Item struct {
	mu      sync.Mutex
	ptr     *C.HurrayItem // nil once closed or moved into another item
	root    *Item         // the item that owns everything (itself for a top-level item)
	cleanup runtime.Cleanup
	tensor  *Tensor
	members []*Item
}

func destroyItem(p *C.HurrayItem) { C.hurray_item_destroy(&p) }

// newItem wraps an owned C item.
func newItem(p *C.HurrayItem) *Item {
	it := &Item{ptr: p}
	it.root = it
	it.cleanup = runtime.AddCleanup(it, destroyItem, p)
	return it
}

// NewItem moves t into a new plain item (to write it, or to make it a member of a
// composite). t is consumed: it is closed afterwards, and the item owns its memory.
func NewItem(t *Tensor) (*Item, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ptr == nil {
		return nil, fmt.Errorf("hurray: NewItem: %w", ErrClosed)
	}
	if t.parent != nil {
		return nil, &Error{Status: StatusInvalidArgument, Op: "NewItem", Message: "the tensor is borrowed from an item"}
	}
	var out *C.HurrayItem
	p := t.ptr
	if err := call("hurray_item_from_tensor", func() C.HurrayStatus { return C.hurray_item_from_tensor(&p, &out) }); err != nil {
		return nil, err
	}
	t.forget()
	return newItem(out), nil
}

// NewComposite moves head (a tensor with the CompositeHead layout, made by
// [NewTensor]) and members into a new composite item; members must number the
// head's MemberCount. Everything passed in is consumed, on success and on failure
// alike (a failure closes what it was given).
func NewComposite(head *Tensor, members ...*Item) (*Item, error) {
	fail := func(err error) (*Item, error) {
		head.Close()
		for _, m := range members {
			if m != nil && m.root == m {
				m.Close()
			}
		}
		return nil, err
	}
	head.mu.Lock()
	ok := head.ptr != nil && head.parent == nil
	head.mu.Unlock()
	if !ok {
		return fail(&Error{Status: StatusInvalidArgument, Op: "NewComposite",
			Message: "the head must be an open tensor made by NewTensor (not read from a container)"})
	}
	if d := head.Descriptor(); d.Layout == CompositeHead && d.Composite != nil && int(d.Composite.MemberCount) != len(members) {
		return fail(&Error{Status: StatusInvalidArgument, Op: "NewComposite",
			Message: fmt.Sprintf("the head declares %d members, %d given", d.Composite.MemberCount, len(members))})
	}
	for _, m := range members {
		if m == nil || m.root != m || m.ptr == nil {
			return fail(&Error{Status: StatusInvalidArgument, Op: "NewComposite",
				Message: "a member is nil, closed, or belongs to another item"})
		}
	}
	head.mu.Lock()
	hp := head.ptr
	var comp *C.HurrayItem
	err := call("hurray_item_composite_new", func() C.HurrayStatus { return C.hurray_item_composite_new(&hp, &comp) })
	if err == nil {
		head.forget()
	}
	head.mu.Unlock()
	if err != nil {
		return fail(err)
	}
	result := newItem(comp)
	for i, m := range members {
		m.mu.Lock()
		mp := m.ptr
		err := call("hurray_item_composite_push", func() C.HurrayStatus { return C.hurray_item_composite_push(comp, &mp) })
		if err == nil {
			m.forget()
		}
		m.mu.Unlock()
		if err != nil {
			result.Close()
			for _, rest := range members[i:] {
				rest.Close()
			}
			return nil, err
		}
	}
	return result, nil
}

// handle returns the live C item or panics on a closed one.
func (it *Item) handle() *C.HurrayItem {
	if it.ptr == nil || it.root.ptr == nil {
		panic(closedPanic("Item"))
	}
	maybeGC()
	return it.ptr
}

// IsComposite reports whether the item is a composite (a head and members).
func (it *Item) IsComposite() bool {
	var out C.uint8_t
	must("hurray_item_is_composite", C.hurray_item_is_composite(it.handle(), &out))
	runtime.KeepAlive(it)
	return out != 0
}

// Tensor returns the item's tensor (a composite's head), borrowed: valid until the
// item's root is closed.
func (it *Item) Tensor() *Tensor {
	p := it.handle()
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.tensor == nil {
		var t *C.HurrayTensor
		must("hurray_item_tensor", C.hurray_item_tensor(p, &t))
		it.tensor = borrowedTensor(t, it.root)
	}
	runtime.KeepAlive(it)
	return it.tensor
}

// Len is the number of members of a composite (0 for a plain tensor).
func (it *Item) Len() int {
	p := it.handle()
	var n C.uint64_t
	s := C.hurray_item_member_count(p, &n)
	runtime.KeepAlive(it)
	if s == C.HURRAY_ERR_NOT_APPLICABLE {
		return 0
	}
	must("hurray_item_member_count", s)
	return int(n)
}

// Member returns member i of a composite, borrowed: valid until the root is
// closed. It panics when i is out of range.
func (it *Item) Member(i int) *Item {
	n := it.Len()
	if i < 0 || i >= n {
		panic(fmt.Sprintf("hurray: member index %d out of range [0, %d)", i, n))
	}
	p := it.handle()
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.members == nil {
		it.members = make([]*Item, n)
	}
	if it.members[i] == nil {
		var m *C.HurrayItem
		must("hurray_item_member", C.hurray_item_member(p, C.uint64_t(i), &m))
		it.members[i] = &Item{ptr: m, root: it.root}
	}
	runtime.KeepAlive(it)
	return it.members[i]
}

// Members returns every member of a composite (see [Item.Member]).
func (it *Item) Members() []*Item {
	out := make([]*Item, it.Len())
	for i := range out {
		out[i] = it.Member(i)
	}
	return out
}

// Close releases the item with its tensors and members. It is idempotent; on a
// member item it does nothing (close the root).
func (it *Item) Close() error {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.ptr == nil || it.root != it {
		return nil
	}
	p := it.ptr
	it.forget()
	return call("hurray_item_destroy", func() C.HurrayStatus { return C.hurray_item_destroy(&p) })
}

// forget drops the item's claim on its handle without destroying it. it.mu held.
func (it *Item) forget() {
	it.cleanup.Stop()
	it.ptr = nil
}
