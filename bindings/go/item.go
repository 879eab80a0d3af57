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
//
// A borrowed Tensor or member Item keeps its root Item reachable, but views of
// their memory (Bytes, Float32s, ...) do not: keep the Item or the borrowed
// Tensor reachable (or Close the Item after the views' last use) while you use a
// view; see Views in the package documentation.
type Item struct {
	mu      sync.Mutex
	ptr     *C.HurrayItem // nil once closed or moved into another item
	root    *Item         // the item that owns everything (itself for a top-level item)
	cleanup runtime.Cleanup
	tensor  *Tensor
	members []*Item
	gone    string // why ptr is nil: "is closed", "was moved into a composite by NewComposite"
	dbg     *viewDebug
}

func destroyItem(p *C.HurrayItem) { C.hurray_item_destroy(&p) }

// newItem wraps an owned C item.
func newItem(p *C.HurrayItem) *Item {
	it := &Item{ptr: p}
	it.root = it
	it.cleanup, it.dbg = addItemCleanup(it, p)
	return it
}

// NewItem moves t into a new plain item (to write it, or to make it a member of a
// composite). t is consumed: it is closed afterwards, and the item owns its memory.
// A nil, closed (or already consumed) or borrowed tensor gives ErrInvalidArgument;
// a closed one also matches ErrClosed.
func NewItem(t *Tensor) (*Item, error) {
	const op = "NewItem"
	if t == nil {
		return nil, invalidArg(op, "nil *Tensor")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if why := t.closed(); why != "" {
		return nil, errClosedArg(op, why)
	}
	if t.parent != nil {
		return nil, invalidArg(op, "the tensor is borrowed from an item (only the item's owner can move it)")
	}
	var out *C.HurrayItem
	p := t.ptr
	if err := call(op, func() C.HurrayStatus { return C.hurray_item_from_tensor(&p, &out) }); err != nil {
		return nil, err
	}
	t.forget("was moved into an item by NewItem")
	return newItem(out), nil
}

// NewComposite moves head (a tensor with the CompositeHead layout, made by
// [NewTensor]) and members into a new composite item; members must number the
// head's MemberCount. Everything passed in is consumed, on success and on failure
// alike (a failure closes what it was given).
//
// Arguments it cannot take give ErrInvalidArgument, before anything is moved: a nil
// head or member, a tensor or item borrowed from another item, the same item twice,
// or a closed one — including one already moved into an item by an earlier NewItem
// or NewComposite (such an error also matches ErrClosed).
func NewComposite(head *Tensor, members ...*Item) (*Item, error) {
	const op = "NewComposite"
	fail := func(err error) (*Item, error) {
		if head != nil {
			head.Close()
		}
		for _, m := range members {
			if m != nil && m.root == m {
				m.Close()
			}
		}
		return nil, err
	}
	if head == nil {
		return fail(invalidArg(op, "nil head"))
	}
	head.mu.Lock()
	why, borrowed := head.closed(), head.parent != nil
	head.mu.Unlock()
	switch {
	case why != "":
		return fail(errClosedArg(op, "head: "+why))
	case borrowed:
		return fail(invalidArg(op, "the head is borrowed from an item; it must be a tensor made by NewTensor"))
	}
	if d := head.Descriptor(); d.Layout == CompositeHead && d.Composite != nil && int(d.Composite.MemberCount) != len(members) {
		return fail(invalidArg(op, "the head declares %d members, %d given", d.Composite.MemberCount, len(members)))
	}
	seen := make(map[*Item]int, len(members))
	for i, m := range members {
		if m == nil {
			return fail(invalidArg(op, "member %d is nil", i))
		}
		if j, dup := seen[m]; dup {
			return fail(invalidArg(op, "member %d is member %d again; an item can be moved into a composite once", i, j))
		}
		seen[m] = i
		if m.root != m {
			return fail(invalidArg(op, "member %d is borrowed from another item (a member of a composite)", i))
		}
		m.mu.Lock()
		why := m.closed()
		m.mu.Unlock()
		if why != "" {
			return fail(errClosedArg(op, fmt.Sprintf("member %d: %s", i, why)))
		}
	}
	head.mu.Lock()
	hp := head.ptr
	var comp *C.HurrayItem
	err := call(op, func() C.HurrayStatus { return C.hurray_item_composite_new(&hp, &comp) })
	if err == nil {
		head.forget("was moved into a composite by NewComposite")
	}
	head.mu.Unlock()
	if err != nil {
		return fail(err)
	}
	result := newItem(comp)
	for i, m := range members {
		m.mu.Lock()
		mp := m.ptr
		err := call(op, func() C.HurrayStatus { return C.hurray_item_composite_push(comp, &mp) })
		if err == nil {
			m.forget("was moved into a composite by NewComposite")
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

// goneWhy says what happened to a root item whose handle is gone.
func (it *Item) goneWhy() string {
	if it.gone == "" {
		return "is closed"
	}
	return it.gone
}

// closed says why it cannot be used ("the item is closed", "the item was moved
// into a composite by NewComposite", ...), or returns "" when it can.
func (it *Item) closed() string {
	switch {
	case it.root != it && it.root.ptr == nil:
		return "the item is a member of an item that " + it.root.goneWhy()
	case it.ptr == nil:
		return "the item " + it.goneWhy()
	}
	return ""
}

// handle returns the live C item or panics on a closed one (for accessors that
// have no error result).
func (it *Item) handle() *C.HurrayItem {
	if why := it.closed(); why != "" {
		panic(closedPanic(why))
	}
	maybeGC()
	return it.ptr
}

// arg returns the live C item of it given to op as an argument, or an
// ErrInvalidArgument error (that also matches ErrClosed when it is closed).
func (it *Item) arg(op string) (*C.HurrayItem, error) {
	if it == nil {
		return nil, invalidArg(op, "nil *Item")
	}
	if why := it.closed(); why != "" {
		return nil, errClosedArg(op, why)
	}
	maybeGC()
	return it.ptr, nil
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
		it.members[i] = &Item{ptr: m, root: it.root, dbg: it.root.dbg}
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
	it.forget("is closed")
	return call("Item.Close", func() C.HurrayStatus { return C.hurray_item_destroy(&p) })
}

// forget drops the item's claim on its handle without destroying it, recording
// why. it.mu held.
func (it *Item) forget(why string) {
	it.cleanup.Stop()
	it.ptr = nil
	it.gone = why
}
