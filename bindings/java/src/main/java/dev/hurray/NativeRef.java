package dev.hurray;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * A native handle shared by a Java owner and the views it hands out: destroyed
 * exactly once, when the last holder lets go (the owner's {@code close()} or its
 * Cleaner, and each view's Cleaner). Never references its holders, so the Cleaner
 * can run.
 */
final class NativeRef {
    /** The one Cleaner of the binding (its thread destroys what nobody closed). */
    static final Cleaner CLEANER = Cleaner.create();

    private final long ptr;
    private final LongConsumer destroy;
    private final AtomicInteger holders = new AtomicInteger(1);

    NativeRef(long ptr, LongConsumer destroy) {
        this.ptr = ptr;
        this.destroy = destroy;
    }

    long ptr() {
        return ptr;
    }

    /** Adds a holder; only while one is known to be held (count at least 1). */
    void retain() {
        int n;
        do {
            n = holders.get();
            if (n <= 0) {
                throw new IllegalStateException("hurray: native handle already destroyed");
            }
        } while (!holders.compareAndSet(n, n + 1));
    }

    /**
     * Takes the handle away from its only holder without destroying it (a move into
     * another handle). Fails when anyone else holds it (a view, a borrowed object).
     *
     * @return true when the caller now owns the raw handle; the holder's later
     *     {@link #release()} then does nothing
     */
    boolean take() {
        return holders.compareAndSet(1, 0);
    }

    /** Drops a holder; the last one destroys the handle. */
    void release() {
        if (holders.decrementAndGet() == 0) {
            destroy.accept(ptr);
        }
    }
}
