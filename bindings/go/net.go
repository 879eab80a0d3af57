package hurray

// #include <stdlib.h>
// #include "hurray.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// The network client: a blocking client of the library (hurray_net_client_* in
// include/hurray.h, docs/network.md) driven from Go. Each call blocks its
// goroutine (and the OS thread it runs on) until the answer arrives; a goroutine
// per call watches the call's context and cancels the C client when it is done.

// DialOption changes how [Dial] connects and what the Client accepts.
type DialOption func(*C.HurrayNetClientOptions)

// msClamp converts d to whole milliseconds for the C options (at least 1 for a
// positive d, at most MaxUint32).
func msClamp(d time.Duration) C.uint32_t {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxUint32 {
		ms = math.MaxUint32
	}
	return C.uint32_t(ms)
}

// WithConnectTimeout bounds connecting and the handshake (default 10 s; 0: no
// limit). A deadline of Dial's context shortens it.
func WithConnectTimeout(d time.Duration) DialOption {
	return func(o *C.HurrayNetClientOptions) { o.connect_timeout_ms = msClamp(d) }
}

// WithIOTimeout bounds how long any single read or write may stall (default 60 s;
// 0: no limit). A call that stalls longer fails with an error matching ErrTimeout
// and closes the connection: Dial again.
func WithIOTimeout(d time.Duration) DialOption {
	return func(o *C.HurrayNetClientOptions) { o.io_timeout_ms = msClamp(d) }
}

// WithCallTimeout bounds every Get and Put as a whole (default: no limit beyond the
// stall limit). A call that takes longer fails with an error matching ErrTimeout and
// closes the connection: Dial again. (A context deadline bounds one call instead.)
func WithCallTimeout(d time.Duration) DialOption {
	return func(o *C.HurrayNetClientOptions) { o.call_timeout_ms = msClamp(d) }
}

// WithMaxMessageSize sets the largest message payload the Client accepts, in bytes
// (advertised to the server; default 16 MiB, at least 4096).
func WithMaxMessageSize(n uint32) DialOption {
	return func(o *C.HurrayNetClientOptions) { o.max_message_size = C.uint32_t(n) }
}

// WithMaxItemBytes sets the most data bytes one received item may carry, all the
// tensors of a composite together (default 4 GiB); a larger answer fails with
// ErrLimit.
func WithMaxItemBytes(n uint64) DialOption {
	return func(o *C.HurrayNetClientOptions) { o.max_item_bytes = C.uint64_t(n) }
}

// GetOption changes one [Client.Get].
type GetOption func(*getConfig)

type getConfig struct {
	layouts   []Layout
	alignment uint32
	transcode bool
	parallel  bool
}

// WithLayouts lists the layouts the caller accepts, most preferred first (B.9);
// without it the tensor comes as it is stored.
func WithLayouts(layouts ...Layout) GetOption {
	return func(g *getConfig) { g.layouts = append([]Layout(nil), layouts...) }
}

// WithAlignment asks for data buffers aligned to n bytes (a power of two; default
// 64).
func WithAlignment(n uint32) GetOption { return func(g *getConfig) { g.alignment = n } }

// WithTranscode lets the server convert the tensor to one of the WithLayouts
// layouts.
func WithTranscode() GetOption { return func(g *getConfig) { g.transcode = true } }

// WithParallel lets the server answer in parallel shards (B.13), reassembled by the
// client, when it advertises PARALLEL_STREAMS.
func WithParallel() GetOption { return func(g *getConfig) { g.parallel = true } }

// ServerInfo is what the server said in its SERVER_HELLO (B.7): what the
// connection uses.
type ServerInfo struct {
	// ProtocolVersion is the protocol version in use.
	ProtocolVersion uint32
	// MaxMessageSize is the largest payload the server accepts, in bytes.
	MaxMessageSize uint32
	// CapabilityFlags are the server's capability bits (bit 0 PARALLEL_STREAMS).
	CapabilityFlags uint64
}

// ParallelStreams reports the PARALLEL_STREAMS capability (B.13).
func (s ServerInfo) ParallelStreams() bool { return s.CapabilityFlags&1 != 0 }

// Client is a connection to a Hurray server (`hurray serve`), made by [Dial].
// Its methods may be called from several goroutines; calls run one at a time.
//
// Cancellation: when the context of a call is cancelled or passes its deadline
// mid-call, the call returns promptly with everything it held released, with an
// error matching both ErrCancelled and ctx.Err() (context.Canceled or
// context.DeadlineExceeded). The Client is then dead: every later call fails with
// ErrCancelled; Close it and Dial a new one. A call whose context is already done
// returns ctx.Err() without touching the Client; one done after the call returned
// leaves the Client alone. A context done just as a call completes is decided one
// way, never both: either the call succeeds and the Client stays usable, or the
// call was cancelled (what it fetched is released) and the Client is dead. A
// cancelled Put may still have been stored: the server may have taken it before
// the cancel reached the connection.
//
// Errors of the server map like the library's: an unknown key matches ErrNotFound
// (the Client stays usable), size and store limits ErrLimit, refused versions or
// layouts ErrNotApplicable, protocol violations ErrFormat; Error.NetCode holds the
// protocol's ERROR code (B.16; 2 for UNKNOWN_TENSOR).
type Client struct {
	mu     sync.Mutex // held by a call for its whole duration; Close takes it too
	ptr    *C.HurrayNetClient
	addr   string
	closed bool
	cancel sync.Mutex // guards ptr between Close's cancel and destroy

	cleanup runtime.Cleanup // destroys a Client that was never closed
}

func destroyNetClient(p *C.HurrayNetClient) { C.hurray_net_client_destroy(&p) }

// Dial connects to the server at addr ("host:port") and does the handshake. ctx
// bounds the connect: a deadline shortens the connect timeout, a cancellation
// aborts it. Close the Client when done.
//
//	c, err := hurray.Dial(ctx, "127.0.0.1:7070")
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	it, err := c.Get(ctx, "layer0.weight")
//	if errors.Is(err, hurray.ErrNotFound) { ... }
func Dial(ctx context.Context, addr string, opts ...DialOption) (*Client, error) {
	op := fmt.Sprintf("Dial %q", addr)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, invalidArg(op, "the address is not host:port: %v", err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, invalidArg(op, "the port %q is not a number from 0 to 65535", portStr)
	}
	chost, err := cString(op, "host", host)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(chost))
	var o C.HurrayNetClientOptions
	must("hurray_net_client_options_default", C.hurray_net_client_options_default(&o))
	for _, opt := range opts {
		opt(&o)
	}
	if dl, ok := ctx.Deadline(); ok {
		left := msClamp(time.Until(dl))
		if left == 0 {
			left = 1
		}
		if o.connect_timeout_ms == 0 || left < o.connect_timeout_ms {
			o.connect_timeout_ms = left
		}
	}
	var p *C.HurrayNetClient
	if err := call(op, func() C.HurrayStatus { return C.hurray_net_client_new(&o, &p) }); err != nil {
		return nil, err
	}
	c := &Client{ptr: p, addr: addr}
	c.cleanup = runtime.AddCleanup(c, destroyNetClient, p)
	err = c.run(ctx, op, func() C.HurrayStatus { return C.hurray_net_client_connect(p, chost, C.uint16_t(port)) })
	if err != nil {
		c.destroy()
		return nil, err
	}
	return c, nil
}

// Addr is the address the Client was dialled with.
func (c *Client) Addr() string { return c.addr }

// run runs one blocking C call on the client (c.mu held by the caller) while a
// goroutine watches ctx and cancels the client when ctx is done first; the
// watcher has finished when run returns. When the watcher cancelled, run returns
// an ErrCancelled error matching ctx.Err() even if the C call had completed (the
// cancel closed the Client either way), and the caller releases what the call
// produced.
func (c *Client) run(ctx context.Context, op string, f func() C.HurrayStatus) error {
	done := ctx.Done()
	if done == nil {
		return call(op, f)
	}
	// state: 0 while the call runs, 1 once it returned (the watcher then does
	// nothing), 2 once the watcher claimed it to cancel.
	var state atomic.Int32
	stop := make(chan struct{})
	exited := make(chan bool, 1)
	p := c.ptr
	go func() {
		select {
		case <-done:
			if state.CompareAndSwap(0, 2) {
				// p stays live until run returns (run waits for this
				// goroutine), and cancel may run during another call.
				C.hurray_net_client_cancel(p)
				exited <- true
				return
			}
		case <-stop:
		}
		exited <- false
	}()
	err := call(op, f)
	state.CompareAndSwap(0, 1)
	close(stop)
	if fired := <-exited; fired {
		if err == nil {
			// The call completed as the watcher cancelled the client: the
			// Client is dead all the same, so the call reports the cancel.
			return &Error{Status: StatusCancelled, Op: op, wrapped: ctx.Err(),
				Message: "the context was done as the call completed; the Client is closed"}
		}
		var e *Error
		if errors.As(err, &e) && e.wrapped == nil {
			e.wrapped = ctx.Err()
		}
	}
	return err
}

// start takes the client for one call, or says why it cannot.
func (c *Client) start(op string) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed(op, "the Client is closed")
	}
	return nil
}

// Get fetches the item stored under key: a tensor (it.Tensor()) or a whole
// composite. The Item is the caller's: Close it. Errors: ErrNotFound (with NetCode
// 2) for an unknown key, ErrCancelled for a done ctx (see Client), ErrTimeout,
// ErrIO for a broken connection, ErrLimit for an item over WithMaxItemBytes,
// ErrInvalidArgument for a key holding a NUL byte or bad options.
func (c *Client) Get(ctx context.Context, key string, opts ...GetOption) (*Item, error) {
	op := fmt.Sprintf("Client.Get %q", key)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var g getConfig
	for _, opt := range opts {
		opt(&g)
	}
	ckey, err := cString(op, "key", key)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(ckey))
	var o C.HurrayNetGetOptions
	must("hurray_net_get_options_default", C.hurray_net_get_options_default(&o))
	if g.alignment != 0 {
		o.min_alignment = C.uint32_t(g.alignment)
	}
	o.allow_transcode = cbool(g.transcode)
	o.parallel = cbool(g.parallel)
	var layouts *C.uint8_t
	if len(g.layouts) > 0 {
		layouts = (*C.uint8_t)(C.malloc(C.size_t(len(g.layouts))))
		defer C.free(unsafe.Pointer(layouts))
		s := unsafe.Slice((*byte)(unsafe.Pointer(layouts)), len(g.layouts))
		for i, l := range g.layouts {
			s[i] = byte(l)
		}
		o.preferred_layouts = layouts
		o.preferred_layout_count = C.uint32_t(len(g.layouts))
	}
	if err := c.start(op); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	var out *C.HurrayItem
	p := c.ptr
	err = c.run(ctx, op, func() C.HurrayStatus { return C.hurray_net_client_get(p, ckey, &o, &out) })
	if err != nil {
		if out != nil {
			// Fetched, but the call was cancelled as it completed (see run).
			destroyItem(out)
		}
		return nil, err
	}
	return newItem(out), nil
}

// Put stores t under key on the server and waits for its acknowledgement; the data
// is sent from t's own memory, and t stays the caller's. Errors as for Get, and
// ErrLimit when the server's store is full or t too large, ErrInvalidArgument for a
// nil or closed tensor or a composite's head alone (Item.Tensor of a composite:
// put the composite with PutItem), refused before anything is sent.
func (c *Client) Put(ctx context.Context, key string, t *Tensor) error {
	op := fmt.Sprintf("Client.Put %q", key)
	return c.put(ctx, op, key, func() (func(p *C.HurrayNetClient, k *C.char) C.HurrayStatus, func(), error) {
		tp, err := t.arg(op)
		if err != nil {
			return nil, nil, err
		}
		return func(p *C.HurrayNetClient, k *C.char) C.HurrayStatus {
			return C.hurray_net_client_put(p, k, tp)
		}, t.exit, nil
	})
}

// PutItem stores it (a tensor or a complete composite) under key. it stays the
// caller's. Errors as for Put; ErrState for a composite missing members.
func (c *Client) PutItem(ctx context.Context, key string, it *Item) error {
	op := fmt.Sprintf("Client.PutItem %q", key)
	return c.put(ctx, op, key, func() (func(p *C.HurrayNetClient, k *C.char) C.HurrayStatus, func(), error) {
		ip, err := it.arg(op)
		if err != nil {
			return nil, nil, err
		}
		return func(p *C.HurrayNetClient, k *C.char) C.HurrayStatus {
			return C.hurray_net_client_put_item(p, k, ip)
		}, it.exit, nil
	})
}

func (c *Client) put(ctx context.Context, op, key string, prep func() (func(*C.HurrayNetClient, *C.char) C.HurrayStatus, func(), error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ckey, err := cString(op, "key", key)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(ckey))
	if err := c.start(op); err != nil {
		return err
	}
	defer c.mu.Unlock()
	f, exit, err := prep()
	if err != nil {
		return err
	}
	defer exit()
	p := c.ptr
	return c.run(ctx, op, func() C.HurrayStatus { return f(p, ckey) })
}

// ServerInfo is what the server negotiated. Errors: ErrCancelled after a
// cancellation, ErrState when the connection was closed by a timeout or an I/O
// error, an error matching ErrClosed after Close.
func (c *Client) ServerInfo() (ServerInfo, error) {
	const op = "Client.ServerInfo"
	if err := c.start(op); err != nil {
		return ServerInfo{}, err
	}
	defer c.mu.Unlock()
	var s C.HurrayNetServerInfo
	p := c.ptr
	if err := call(op, func() C.HurrayStatus { return C.hurray_net_client_server_info(p, &s) }); err != nil {
		return ServerInfo{}, err
	}
	return ServerInfo{ProtocolVersion: uint32(s.protocol_version),
		MaxMessageSize:  uint32(s.max_message_size),
		CapabilityFlags: uint64(s.capability_flags)}, nil
}

// Close cancels a call in flight on another goroutine (it returns ErrCancelled),
// waits for it, then closes the connection and frees the client. Closing twice
// is a no-op.
func (c *Client) Close() error {
	if !c.mu.TryLock() {
		c.cancel.Lock()
		if c.ptr != nil {
			C.hurray_net_client_cancel(c.ptr)
		}
		c.cancel.Unlock()
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.destroy()
	return nil
}

func (c *Client) destroy() {
	c.cancel.Lock()
	c.cleanup.Stop()
	destroyNetClient(c.ptr)
	c.ptr = nil
	c.cancel.Unlock()
	runtime.KeepAlive(c)
}
