package hurray

import "sync"

// lifetime guards a library handle against being released while a call uses it.
//
// Every use of the handle (an accessor, a scoped view's callback, a C call taking
// it as an argument) runs between enter and exit. Close ends the lifetime: no new
// use may start, and the handle is released at once when no use is in progress,
// or else by the exit of the last one. So a Close from another goroutine never
// frees memory a call is still reading, and a Close from inside a scoped view's
// callback does not deadlock: the release waits for the callback to return.
type lifetime struct {
	mu      sync.Mutex
	uses    int    // uses in progress
	gone    string // why no use may start ("is closed", ...); "" while open
	pending func() // the release Close deferred to the last exit
}

// enter starts a use, or says why none may start ("is closed", ...).
func (l *lifetime) enter() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gone != "" {
		return l.gone
	}
	l.uses++
	return ""
}

// exit ends a use started by enter; the last one runs a release Close deferred.
func (l *lifetime) exit() {
	l.mu.Lock()
	l.uses--
	var release func()
	if l.uses == 0 && l.pending != nil {
		release, l.pending = l.pending, nil
	}
	l.mu.Unlock()
	if release != nil {
		release()
	}
}

// why says why no use may start, or "" while the lifetime is open.
func (l *lifetime) why() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gone
}

// end stops new uses, recording why, and releases: at once when no use is in
// progress (returning release's error), else at the last exit (an error there is
// dropped: destroying a live handle does not fail). ended is false, and nothing
// happens, when the lifetime had ended already.
func (l *lifetime) end(why string, release func() error) (ended bool, err error) {
	l.mu.Lock()
	if l.gone != "" {
		l.mu.Unlock()
		return false, nil
	}
	l.gone = why
	if l.uses > 0 {
		l.pending = func() { _ = release() }
		l.mu.Unlock()
		return true, nil
	}
	l.mu.Unlock()
	return true, release()
}

// move ends the lifetime without a release (the handle moved elsewhere), but
// only while no use is in progress. On refusal it returns why the lifetime had
// ended already, or busy when a use is in progress.
func (l *lifetime) move(why string) (gone string, busy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gone != "" {
		return l.gone, false
	}
	if l.uses > 0 {
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
	l.mu.Unlock()
}
