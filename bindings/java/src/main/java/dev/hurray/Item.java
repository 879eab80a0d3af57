package dev.hurray;

import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * An item of a stream or file: one plain tensor, or a composite (a head tensor with
 * the {@link Layout#COMPOSITE_HEAD} layout and its members, themselves items). One
 * {@code HurrayItem} handle of the C ABI.
 *
 * <p>Lifetime as for {@link Tensor}: close it (a Cleaner is the safety net).
 * {@link #tensor()} and {@link #member(int)} return objects <em>borrowed</em> from
 * this item: close them too; each keeps the item's memory alive while it (or a view
 * of it) is reachable, so nothing dangles. Using a closed item throws
 * {@link IllegalStateException}.
 */
public final class Item implements AutoCloseable {
    private final NativeRef ref;
    private final Cleaner.Cleanable cleanable;
    private final boolean borrowed;
    private boolean closed;

    /** Takes ownership of an owned {@code HurrayItem *}. */
    Item(long ptr) {
        this.ref = new NativeRef(ptr, Native::itemDestroy);
        this.borrowed = false;
        NativeRef r = ref;
        this.cleanable = NativeRef.register(this, r::release);
    }

    /** A member borrowed from {@code parent}; holds the parent until released. */
    private Item(long ptr, NativeRef parent) {
        parent.retain();
        this.ref = new NativeRef(ptr, p -> parent.release());
        this.borrowed = true;
        NativeRef r = ref;
        this.cleanable = NativeRef.register(this, r::release);
    }

    /**
     * A plain item over {@code tensor}'s memory, without copying. The tensor stays
     * the caller's and usable; the memory lives until both are gone.
     *
     * @param tensor an open tensor (not a composite head)
     * @return the item
     * @throws HurrayException ({@link Status#INVALID_ARGUMENT}) for a composite head
     */
    public static Item of(Tensor tensor) {
        // itemFromTensor consumes the shared handle, on error too.
        return new Item(Native.itemFromTensor(tensor.share()));
    }

    /**
     * A composite: {@code head} (a tensor with the {@link Layout#COMPOSITE_HEAD}
     * layout, shared as in {@link #of}) and {@code members}, which are <em>moved</em>
     * in: on return, successful or not, each (non-null) member object is closed (an
     * owned member's item then belongs to the composite, or is destroyed; a borrowed
     * member just lets go of its parent). A member must be an open item this caller
     * owns (not one borrowed from another item), given once, with no borrowed tensor
     * or member outstanding.
     *
     * @param head the head tensor; its member count must equal {@code members.length}
     * @param members the members, in order
     * @return the composite
     * @throws IllegalArgumentException for a member that cannot be moved (closed,
     *     borrowed, given twice, or with a borrowed object still open); the members are
     *     closed all the same
     * @throws HurrayException when the C ABI refuses the composite
     */
    public static Item composite(Tensor head, Item... members) {
        boolean done = false;
        try {
            Item result = compose(head, members);
            done = true;
            return result;
        } finally {
            if (!done && members != null) {
                for (Item m : members) {
                    if (m != null) {
                        m.close();
                    }
                }
            }
        }
    }

    private static Item compose(Tensor head, Item... members) {
        Objects.requireNonNull(head, "head");
        Set<Item> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Item m : members) {
            Objects.requireNonNull(m, "member");
            synchronized (m) {
                if (m.closed || m.borrowed) {
                    throw new IllegalArgumentException("hurray: a member is closed or borrowed");
                }
            }
            if (!seen.add(m)) {
                throw new IllegalArgumentException("hurray: the same member twice");
            }
        }
        List<Long> taken = new ArrayList<>();
        for (Item m : members) {
            long p = m.take();
            if (p == 0) {
                for (long q : taken) {
                    Native.itemDestroy(q);
                }
                throw new IllegalArgumentException(
                        "hurray: a member has a borrowed tensor or member still open");
            }
            taken.add(p);
        }
        long it;
        try {
            // itemCompositeNew consumes the shared handle, on error too.
            it = Native.itemCompositeNew(head.share());
        } catch (RuntimeException | Error e) {
            for (long q : taken) {
                Native.itemDestroy(q);
            }
            throw e;
        }
        Item result = new Item(it);
        for (int i = 0; i < taken.size(); i++) {
            try {
                Native.itemCompositePush(it, taken.get(i));
            } catch (RuntimeException | Error e) {
                // itemCompositePush consumed member i, refused or not.
                for (long q : taken.subList(i + 1, taken.size())) {
                    Native.itemDestroy(q);
                }
                result.close();
                throw e;
            }
        }
        return result;
    }

    /** Moves the raw handle out (closing this item), or 0 when something else holds it. */
    private synchronized long take() {
        if (closed || borrowed || !ref.take()) {
            return 0;
        }
        closed = true;
        cleanable.clean(); // release() after take() does nothing
        return ref.ptr();
    }

    /** For tests: whether this object is closed (or was moved into a composite). */
    synchronized boolean isClosedForTest() {
        return closed;
    }

    synchronized long handle() {
        if (closed) {
            throw new IllegalStateException("hurray: item is closed");
        }
        return ref.ptr();
    }

    /**
     * Adds a hold on the native item for the duration of a native use that may run
     * user code (a stream writer's output stream): a {@link #close()} from that code
     * then only drops this object's hold; the item stays until the returned ref's
     * {@link NativeRef#release()}.
     */
    synchronized NativeRef pin() {
        handle();
        ref.retain();
        return ref;
    }

    /** @return true for a composite (a head and members) */
    public synchronized boolean isComposite() {
        return Native.itemIsComposite(handle());
    }

    /**
     * The item's tensor: the tensor of a plain item, the head of a composite.
     * Borrowed: close it; it keeps this item's memory alive while it lives.
     *
     * @return a new borrowed tensor object
     */
    public synchronized Tensor tensor() {
        return new Tensor(Native.itemTensor(handle()), ref);
    }

    /** @return the number of members (0 for a plain item) */
    public synchronized int memberCount() {
        long it = handle();
        return Native.itemIsComposite(it) ? Math.toIntExact(Native.itemMemberCount(it)) : 0;
    }

    /**
     * Member {@code index}, borrowed: close it; it keeps this item alive while it lives.
     *
     * @param index {@code 0 <= index < memberCount()}
     * @return a new borrowed item object
     * @throws HurrayException ({@link Status#OUT_OF_RANGE}) for a bad index
     */
    public synchronized Item member(int index) {
        return new Item(Native.itemMember(handle(), index), ref);
    }

    /** @return every member, borrowed (close them) */
    public List<Item> members() {
        int n = memberCount();
        List<Item> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(member(i));
        }
        return out;
    }

    /** Releases this item's hold on its native handle; idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            cleanable.clean();
        }
    }
}
