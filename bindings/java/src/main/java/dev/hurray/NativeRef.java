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
    /**
     * The binding's Cleaners (their threads destroy what nobody closed). A
     * {@link Cleaner} keeps its registrations in one list guarded by one lock, taken
     * by every {@code register} and every {@code clean}; with one Cleaner, threads
     * sharing a {@link TensorFile} queued on that lock for every tensor they opened.
     * Registrations are spread over several Cleaners by thread, one per CPU up to 8;
     * each costs one idle daemon thread.
     */
    private static final Cleaner[] CLEANERS = cleaners();

    private static Cleaner[] cleaners() {
        int n = Math.max(1, Math.min(8, Runtime.getRuntime().availableProcessors()));
        Cleaner[] c = new Cleaner[n];
        for (int i = 0; i < n; i++) {
            c[i] = Cleaner.create();
        }
        return c;
    }

    /**
     * Registers {@code action} to run when {@code owner} becomes phantom reachable,
     * with the calling thread's Cleaner.
     *
     * @param owner the object whose collection triggers the action
     * @param action what to run (must not reference {@code owner})
     * @return the cleanable, whose {@code clean()} runs the action at most once
     */
    static Cleaner.Cleanable register(Object owner, Runnable action) {
        Cleaner c = CLEANERS.length == 1 ? CLEANERS[0]
                : CLEANERS[(int) (Thread.currentThread().getId() % CLEANERS.length)];
        return c.register(owner, action);
    }

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
