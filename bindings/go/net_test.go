package hurray

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hurrayCLI finds the `hurray` program: $HURRAY_BIN, else the workspace's
// newer of its target/release and target/debug builds (`cargo build -p hurray-cli`).
func hurrayCLI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("HURRAY_BIN"); p != "" {
		return p
	}
	best, bestTime := "", time.Time{}
	for _, p := range []string{"../../target/release/hurray", "../../target/debug/hurray"} {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(bestTime) {
			best, bestTime = p, st.ModTime()
		}
	}
	if best != "" {
		abs, _ := filepath.Abs(best)
		return abs
	}
	const msg = "no hurray program: set HURRAY_BIN or run `cargo build -p hurray-cli`"
	if ci := os.Getenv("CI"); ci != "" && ci != "0" && ci != "false" {
		t.Fatal(msg + " (under CI these tests must run)")
	}
	t.Skip(msg)
	return ""
}

// serve starts `hurray serve FILE --listen 127.0.0.1:0` and returns its address;
// the server is stopped (SIGTERM) when the test ends.
func serve(t testing.TB, file string) string {
	t.Helper()
	cmd := exec.Command(hurrayCLI(t), "serve", file, "--listen", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("hurray serve printed no address: %v", err)
	}
	i := strings.LastIndex(line, " on ")
	if i < 0 {
		t.Fatalf("hurray serve printed %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return strings.TrimSpace(line[i+4:])
}

// writeServed writes a file with "w" (n float32 values 0, 1, ...) and returns its
// path.
func writeServed(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "served.hrry")
	tensor, err := NewDense(fill(n, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tensor.Close()
	w, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor("w", tensor); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkRamp fails unless it is a plain float32 tensor of n values 0, 1, ...
func checkRamp(t testing.TB, it *Item, n int) {
	t.Helper()
	if it.IsComposite() {
		t.Fatal("got a composite")
	}
	err := it.Tensor().WithFloat32s(func(v []float32) error {
		if len(v) != n {
			t.Fatalf("%d values, want %d", len(v), n)
		}
		for i, x := range v {
			if x != float32(i) {
				t.Fatalf("value %d = %v", i, x)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNetGetPutRoundTrip(t *testing.T) {
	addr := serve(t, writeServed(t, 1000))
	ctx := context.Background()
	c, err := Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.ServerInfo()
	if err != nil || info.ProtocolVersion == 0 || info.MaxMessageSize < 4096 {
		t.Fatalf("ServerInfo = %+v, %v", info, err)
	}
	it, err := c.Get(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	checkRamp(t, it, 1000)
	if got := it.Tensor().Shape(); len(got) != 1 || got[0] != 1000 {
		t.Fatalf("shape %v", got)
	}
	it.Close()

	vals := Make[int64](3)
	copy(vals, []int64{7, -8, 9})
	put, err := NewDense(vals, []uint64{3})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "p", put); err != nil {
		t.Fatal(err)
	}
	put.Close()
	back, err := c.Get(ctx, "p", WithParallel(), WithAlignment(128))
	if err != nil {
		t.Fatal(err)
	}
	err = back.Tensor().WithInt64s(func(v []int64) error {
		if !equalSlices(v, []int64{7, -8, 9}) {
			t.Errorf("put then got %v", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	back.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Get(ctx, "w"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	requireNoLeaks(t)
}

func TestNetUnknownKeyIsNotFound(t *testing.T) {
	addr := serve(t, writeServed(t, 10))
	ctx := context.Background()
	c, err := Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Get(ctx, "no such tensor")
	var e *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &e) || e.NetCode != 2 {
		t.Fatalf("unknown key: %v (%#v)", err, e)
	}
	if !strings.Contains(err.Error(), `Client.Get "no such tensor"`) {
		t.Errorf("message %q does not name the call", err)
	}
	// The connection stays usable.
	it, err := c.Get(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	checkRamp(t, it, 10)
	it.Close()
	if _, err := c.Get(ctx, "a\x00b"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("key with NUL: %v", err)
	}
	if _, err := Dial(ctx, "no-port"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Dial without a port: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Get(done, "w"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with a done context: %v", err)
	}
}

// stallProxy forwards connections to addr, but stops forwarding the server's bytes
// after limit of them (the client then waits mid-transfer); stalled is closed
// then. Everything closes when the test ends.
func stallProxy(t *testing.T, addr string, limit int64) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stalled := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				return
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(out, in) }()
			go func() {
				defer wg.Done()
				_, _ = io.CopyN(in, out, limit)
				once.Do(func() { close(stalled) })
				// Hold the rest: read nothing more until the test ends.
			}()
		}
	}()
	return ln.Addr().String(), stalled
}

// A cancelled context mid-transfer ends the Get promptly, releases everything,
// and leaves the server serving other clients.
func TestNetCancelMidTransfer(t *testing.T) {
	const n = 16 << 20 // 64 MiB of float32
	addr := serve(t, writeServed(t, n))
	proxy, stalled := stallProxy(t, addr, 4<<20)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Dial(ctx, proxy)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-stalled
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	_, err = c.Get(ctx, "w")
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Get: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}
	// The client is dead, and says so.
	if _, err := c.Get(context.Background(), "w"); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Get after cancel: %v", err)
	}
	c.Close()
	requireNoLeaks(t)

	// The server still serves (directly, not through the stalled proxy).
	c2, err := Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	it, err := c2.Get(context.Background(), "w")
	if err != nil {
		t.Fatal(err)
	}
	checkRamp(t, it, n)
	it.Close()
	c2.Close()
	requireNoLeaks(t)
}

// A context deadline mid-transfer cancels the call with DeadlineExceeded; Close
// from another goroutine cancels a call in flight.
func TestNetDeadlineAndCloseMidTransfer(t *testing.T) {
	addr := serve(t, writeServed(t, 4<<20))
	proxy, _ := stallProxy(t, addr, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c, err := Dial(context.Background(), proxy)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(ctx, "w")
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get past its deadline: %v", err)
	}
	c.Close()

	proxy, stalled := stallProxy(t, addr, 1<<20)
	c, err = Dial(context.Background(), proxy)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-stalled
		time.Sleep(50 * time.Millisecond)
		c.Close()
	}()
	if _, err := c.Get(context.Background(), "w"); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Get while closed: %v", err)
	}
	requireNoLeaks(t)
}

// A deadline landing around the moment a call completes is decided one way: a Get
// that returns its item leaves the Client usable, one that reports ErrCancelled
// leaves it dead; never a success on a dead Client. Deadlines sweep 20 µs..2 ms
// around a small GET's duration so that both outcomes and the race between them
// occur.
func TestNetDeadlineAsACallCompletesIsDecidedOneWay(t *testing.T) {
	addr := serve(t, writeServed(t, 256))
	ok, cancelled := 0, 0
	for i := range 300 {
		c, err := Dial(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(20+(i%100)*20)*time.Microsecond)
		it, err := c.Get(ctx, "w")
		cancel()
		switch {
		case err == nil:
			ok++
			checkRamp(t, it, 256)
			it.Close()
			// The call succeeded: the Client must still work.
			it2, err := c.Get(context.Background(), "w")
			if err != nil {
				t.Fatalf("run %d: Get succeeded, then the Client failed: %v", i, err)
			}
			it2.Close()
		case errors.Is(err, ErrCancelled) && errors.Is(err, context.DeadlineExceeded):
			cancelled++
			if _, err := c.Get(context.Background(), "w"); !errors.Is(err, ErrCancelled) {
				t.Fatalf("run %d: cancelled, then the Client answered: %v", i, err)
			}
		case errors.Is(err, context.DeadlineExceeded):
			// Done before the call started: the Client was not touched.
		default:
			t.Fatalf("run %d: %v", i, err)
		}
		c.Close()
	}
	t.Logf("%d completed, %d cancelled of 300", ok, cancelled)
	requireNoLeaks(t)
}

// A composite's head alone is refused before anything is sent (it would leave the
// server waiting for members); the Client stays usable.
func TestNetPutOfACompositeHeadAloneIsRefused(t *testing.T) {
	addr := serve(t, writeServed(t, 8))
	ctx := context.Background()
	c, err := Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head, err := NewTensor(Descriptor{
		DType: Float32, Layout: CompositeHead, Shape: []uint64{2, 4},
		Composite: &CompositeFields{MemberCount: 2, Rule: Partition},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer head.Close()
	err = c.Put(ctx, "head", head)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "composite head") {
		t.Fatalf("Put of a head alone: %v", err)
	}
	it, err := c.Get(ctx, "w")
	if err != nil {
		t.Fatalf("the Client after the refusal: %v", err)
	}
	checkRamp(t, it, 8)
	it.Close()
}
