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
// A borrowed Tensor or member Item keeps its root Item reachable, and a call on
// one (a scoped view's callback included) holds the root in use: closing the root
// meanwhile takes effect when the call returns. Unsafe views of their memory
// (UnsafeBytes, UnsafeValues, ...) keep nothing alive: keep the Item or the
// borrowed Tensor reachable while you use one; see Views in the package
// documentation.
type Item struct {
	life    lifetime      // a root item's; members live by their root's (see Tensor)
	mu      sync.Mutex    // guards tensor and members, made on first use
	ptr     *C.HurrayItem // set once; not used once the root's lifetime ended
	root    *Item         // the item that owns everything (itself for a top-level item)
	cleanup runtime.Cleanup
	tensor  *Tensor
	members []*Item
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
	if t.parent != nil {
		if why := t.closed(); why != "" {
			return nil, errClosedArg(op, why)
		}
		return nil, invalidArg(op, "the tensor is borrowed from an item (only the item's owner can move it)")
	}
	if err := t.move(op, "was moved into an item by NewItem", true); err != nil {
		return nil, err
	}
	var out *C.HurrayItem
	p := t.ptr
	if err := call(op, func() C.HurrayStatus { return C.hurray_item_from_tensor(&p, &out) }); err != nil {
		t.life.unmove() // on error nothing moved
		return nil, err
	}
	t.cleanup.Stop()
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
	why, borrowed := head.closed(), head.parent != nil
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
		if why := m.closed(); why != "" {
			return fail(errClosedArg(op, fmt.Sprintf("member %d: %s", i, why)))
		}
	}
	if err := head.move(op, "was moved into a composite by NewComposite", true); err != nil {
		return fail(err)
	}
	hp := head.ptr
	var comp *C.HurrayItem
	if err := call(op, func() C.HurrayStatus { return C.hurray_item_composite_new(&hp, &comp) }); err != nil {
		head.life.unmove() // on error nothing moved: fail closes the head
		return fail(err)
	}
	head.cleanup.Stop()
	result := newItem(comp)
	for i, m := range members {
		err := m.move(op, "was moved into a composite by NewComposite")
		if err == nil {
			mp := m.ptr
			if err = call(op, func() C.HurrayStatus { return C.hurray_item_composite_push(comp, &mp) }); err != nil {
				m.life.unmove() // on error nothing moved: closed below
			} else {
				m.cleanup.Stop()
			}
		}
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

// move ends a root item's lifetime without destroying its handle (it moves into
// a composite), recording why; an error when the item is closed (an
// ErrInvalidArgument matching ErrClosed) or in use by another goroutine
// (ErrState). Once the move succeeded the caller stops the cleanup; if it failed,
// it.life.unmove() reopens the item.
func (it *Item) move(op, why string) error {
	gone, busy := it.life.move(why)
	switch {
	case busy:
		return &Error{Status: StatusState, Op: op, Message: "the item is in use by another goroutine"}
	case gone != "":
		return errClosedArg(op, "the item "+gone)
	}
	return nil
}

// closed says why it cannot be used ("the item is closed", "the item was moved
// into a composite by NewComposite", ...), or returns "" when it can.
func (it *Item) closed() string {
	why := it.root.life.why()
	switch {
	case why == "":
		return ""
	case it.root != it:
		return "the item is a member of an item that " + why
	}
	return "the item " + why
}

// enter starts a use of the item's memory (its root's lifetime), or says why it
// cannot be used.
func (it *Item) enter() string {
	if why := it.root.life.enter(); why != "" {
		if it.root != it {
			return "the item is a member of an item that " + why
		}
		return "the item " + why
	}
	maybeGC()
	return ""
}

// exit ends a use started by enter (and keeps it reachable until then).
func (it *Item) exit() { it.root.life.exit() }

// use starts a use or panics on a closed item (for accessors that have no error
// result); the caller defers it.exit().
func (it *Item) use() {
	if why := it.enter(); why != "" {
		panic(closedPanic(why))
	}
}

// arg starts a use of the handle of it given to op as an argument and returns it,
// or an ErrInvalidArgument error (that also matches ErrClosed when it is closed);
// on success the caller calls it.exit() once the library is done with the handle.
func (it *Item) arg(op string) (*C.HurrayItem, error) {
	if it == nil {
		return nil, invalidArg(op, "nil *Item")
	}
	if why := it.enter(); why != "" {
		return nil, errClosedArg(op, why)
	}
	return it.ptr, nil
}

// IsComposite reports whether the item is a composite (a head and members).
func (it *Item) IsComposite() bool {
	it.use()
	defer it.exit()
	var out C.uint8_t
	must("hurray_item_is_composite", C.hurray_item_is_composite(it.ptr, &out))
	return out != 0
}

// Tensor returns the item's tensor (a composite's head), borrowed: valid until the
// item's root is closed.
func (it *Item) Tensor() *Tensor {
	it.use()
	defer it.exit()
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.tensor == nil {
		var t *C.HurrayTensor
		must("hurray_item_tensor", C.hurray_item_tensor(it.ptr, &t))
		it.tensor = borrowedTensor(t, it.root)
	}
	return it.tensor
}

// Len is the number of members of a composite (0 for a plain tensor).
func (it *Item) Len() int {
	it.use()
	defer it.exit()
	return it.len()
}

// len is Len on an item in use.
func (it *Item) len() int {
	var n C.uint64_t
	s := C.hurray_item_member_count(it.ptr, &n)
	if s == C.HURRAY_ERR_NOT_APPLICABLE {
		return 0
	}
	must("hurray_item_member_count", s)
	return int(n)
}

// Member returns member i of a composite, borrowed: valid until the root is
// closed. It panics when i is out of range.
func (it *Item) Member(i int) *Item {
	it.use()
	defer it.exit()
	n := it.len()
	if i < 0 || i >= n {
		panic(fmt.Sprintf("hurray: member index %d out of range [0, %d)", i, n))
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.members == nil {
		it.members = make([]*Item, n)
	}
	if it.members[i] == nil {
		var m *C.HurrayItem
		must("hurray_item_member", C.hurray_item_member(it.ptr, C.uint64_t(i), &m))
		it.members[i] = &Item{ptr: m, root: it.root, dbg: it.root.dbg}
	}
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

// Close releases the item with its tensors and members. It is idempotent, and
// may be called from any goroutine at any time: calls in progress on the item or
// on the tensors and members it lends (scoped views included) finish first, the
// release happening when the last one returns. On a member item it does nothing
// (close the root).
func (it *Item) Close() error {
	if it.root != it {
		return nil
	}
	p := it.ptr
	ended, err := it.life.end("is closed", func() error {
		return call("Item.Close", func() C.HurrayStatus { return C.hurray_item_destroy(&p) })
	})
	if ended {
		it.cleanup.Stop()
	}
	return err
}
