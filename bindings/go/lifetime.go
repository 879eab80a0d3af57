package hurray

import (
	"sync"
	"sync/atomic"
)

// lifetime guards a library handle against being released while a call uses it.
//
// Every use of the handle (an accessor, a scoped view's callback, a C call taking
// it as an argument) runs between enter and exit. Close ends the lifetime: no new
// use may start, and the handle is released at once when no use is in progress,
// or else by the exit of the last one. So a Close from another goroutine never
// frees memory a call is still reading, and a Close from inside a scoped view's
// callback does not deadlock: the release waits for the callback to return.
//
// enter and exit are one atomic operation each (the count of uses and the ended
// bit share one word); mu orders the rare transitions (end, move) with the
// reading of why and of the deferred release.
type lifetime struct {
	state   atomic.Uint64 // endedBit | uses in progress
	mu      sync.Mutex
	gone    string       // why no use may start ("is closed", ...); set with endedBit, under mu
	pending func() error // the release end deferred to the last exit; under mu
}

const endedBit = 1 << 63

// enter starts a use, or says why none may start ("is closed", ...).
func (l *lifetime) enter() string {
	for {
		s := l.state.Load()
		if s&endedBit != 0 {
			return l.why()
		}
		if l.state.CompareAndSwap(s, s+1) {
			return ""
		}
	}
}

// exit ends a use started by enter; the last one after end runs the release end
// deferred. (Once endedBit is set no use starts, so the count reaches 0 once.)
func (l *lifetime) exit() {
	if l.state.Add(^uint64(0)) != endedBit {
		return
	}
	l.mu.Lock()
	release := l.pending
	l.pending = nil
	l.mu.Unlock()
	if release != nil {
		_ = release() // destroying a live handle does not fail
	}
}

// why says why no use may start, or "" while the lifetime is open.
func (l *lifetime) why() string {
	if l.state.Load()&endedBit == 0 {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gone
}

// end stops new uses, recording why, and releases: at once when no use is in
// progress (returning release's error), else at the last exit. ended is false, and
// nothing happens, when the lifetime had ended already.
func (l *lifetime) end(why string, release func() error) (ended bool, err error) {
	l.mu.Lock()
	if l.state.Load()&endedBit != 0 {
		l.mu.Unlock()
		return false, nil
	}
	l.gone, l.pending = why, release
	old := l.state.Or(endedBit)
	if old != 0 { // uses in progress: the last exit releases
		l.mu.Unlock()
		return true, nil
	}
	l.pending = nil
	l.mu.Unlock()
	return true, release()
}

// move ends the lifetime without a release (the handle moved elsewhere), but
// only while no use is in progress. On refusal it returns why the lifetime had
// ended already, or busy when a use is in progress.
func (l *lifetime) move(why string) (gone string, busy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.state.CompareAndSwap(0, endedBit) {
		if l.state.Load()&endedBit != 0 {
			return l.gone, false
		}
		return "", true
	}
	l.gone = why
	return "", false
}

// unmove reopens a lifetime that move ended, when the move itself failed (the
// library took nothing).
func (l *lifetime) unmove() {
	l.mu.Lock()
	l.gone = ""
	l.state.Store(0)
	l.mu.Unlock()
}
