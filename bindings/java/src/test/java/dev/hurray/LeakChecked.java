package dev.hurray;

import org.junit.jupiter.api.AfterEach;

/**
 * Every test ends with the library's live-object count back at 0: whatever a test
 * did not close is collected (System.gc lets the Cleaner run), and nothing was
 * released twice (the count would go negative or a release would crash).
 */
abstract class LeakChecked {
    @AfterEach
    void nothingLeaked() throws InterruptedException {
        TestSupport.awaitLive(0);
    }
}
