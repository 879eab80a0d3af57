package hurray

// #include "hurray.h"
// #include "hurray_go.h"
import "C"

import (
	"runtime"
	"sync"
)

// BufferPool keeps the memory of tensors a [Reader] read after they are closed,
// and hands it to the next buffers of a fitting size, so a steady flow of tensors
// is read into memory that is already mapped instead of fresh pages (every first
// touch of a fresh page is a page fault: in hurray-io's benchmark a 256 MiB read
// into pooled memory takes 0.65 of the time of one into fresh memory). Give it to readers with [Reader.SetPool]; one pool may serve
// many readers, from any goroutines.
//
// When the last holder of a pooled buffer lets go (the tensor or item is closed or
// collected), its allocation returns to the pool if there is room: idle
// allocations stay resident up to the pool's byte bound, and the oldest are freed
// first. An allocation is reused for a buffer of n bytes when its size is between
// n and 2n.
//
// Pooled memory is library memory, not Go memory: an unsafe view of a pooled
// tensor (UnsafeBytes, UnsafeValues, ...) does not keep it alive, and once the
// tensor is closed its memory is reused, so such a view kept past Close would
// later see the bytes of another tensor. Copies and scoped views (Float32s,
// WithFloat32s, ...) have no such hazard.
type BufferPool struct {
	mu      sync.Mutex
	ptr     *C.HurrayBufferPool
	cleanup runtime.Cleanup
}

// PoolStats are a [BufferPool]'s counters.
type PoolStats struct {
	// Reused counts buffers read into an idle allocation.
	Reused uint64
	// Allocated counts buffers that needed new memory from the system.
	Allocated uint64
	// IdleBuffers and IdleBytes are what the pool holds now.
	IdleBuffers int
	IdleBytes   int64
}

func destroyPool(p *C.HurrayBufferPool) { C.hurray_buffer_pool_destroy(&p) }

// NewBufferPool returns a pool that keeps at most maxCachedBytes bytes (and at most
// 256) of idle allocations; 0 keeps nothing. Close it when done (readers and
// tensors still using it keep it alive).
//
// Errors: ErrInvalidArgument for a negative size.
func NewBufferPool(maxCachedBytes int64) (*BufferPool, error) {
	const op = "NewBufferPool"
	if maxCachedBytes < 0 {
		return nil, invalidArg(op, "maxCachedBytes is %d; it must not be negative", maxCachedBytes)
	}
	var p *C.HurrayBufferPool
	if err := call(op, func() C.HurrayStatus {
		return C.hurray_buffer_pool_new(C.uint64_t(maxCachedBytes), &p)
	}); err != nil {
		return nil, err
	}
	bp := &BufferPool{ptr: p}
	bp.cleanup = runtime.AddCleanup(bp, destroyPool, p)
	return bp, nil
}

// Stats returns the pool's counters.
//
// Errors: ErrClosed after Close.
func (bp *BufferPool) Stats() (PoolStats, error) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.ptr == nil {
		return PoolStats{}, errClosed("BufferPool.Stats", "the BufferPool is closed")
	}
	var s C.HurrayBufferPoolStats
	err := call("BufferPool.Stats", func() C.HurrayStatus { return C.hurray_buffer_pool_stats(bp.ptr, &s) })
	runtime.KeepAlive(bp)
	return PoolStats{
		Reused:      uint64(s.reused),
		Allocated:   uint64(s.allocated),
		IdleBuffers: int(s.idle_buffers),
		IdleBytes:   int64(s.idle_bytes),
	}, err
}

// Clear frees every idle allocation now; allocations in use still return later.
//
// Errors: ErrClosed after Close.
func (bp *BufferPool) Clear() error {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.ptr == nil {
		return errClosed("BufferPool.Clear", "the BufferPool is closed")
	}
	err := call("BufferPool.Clear", func() C.HurrayStatus { return C.hurray_buffer_pool_clear(bp.ptr) })
	runtime.KeepAlive(bp)
	return err
}

// Close releases this handle to the pool. Readers and tensors still using the pool
// keep it alive; its idle memory is freed with the last of them. Idempotent.
func (bp *BufferPool) Close() error {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.ptr == nil {
		return nil
	}
	p := bp.ptr
	bp.ptr = nil
	bp.cleanup.Stop()
	return call("BufferPool.Close", func() C.HurrayStatus { return C.hurray_buffer_pool_destroy(&p) })
}

// SetPool makes the Reader read the buffers it starts from now on into memory from
// pool, or, with nil, into Go memory again (the default). The Reader keeps its own
// reference: the pool may be closed before the Reader.
//
// The trade: by default every buffer is a new Go allocation, which even unsafe
// views keep alive by themselves. Pooled buffers are library memory that is reused
// once the tensor is closed: faster for a steady flow of tensors (no new memory
// per tensor, no garbage for the collector), but an unsafe view must not be used
// after its tensor is closed, and the tensor must stay reachable while one is in
// use (see Views in the package documentation).
//
// Errors: ErrClosed when the Reader is closed; ErrInvalidArgument (matching
// ErrClosed too) when the pool is closed.
func (r *Reader) SetPool(pool *BufferPool) error {
	const op = "Reader.SetPool"
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr == nil {
		return errClosed(op, "the Reader is closed")
	}
	if pool == nil {
		err := call(op, func() C.HurrayStatus { return C.hurray_go_decoder_use_go_memory(r.ptr) })
		runtime.KeepAlive(r)
		if err == nil {
			r.pooled = false
		}
		return err
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.ptr == nil {
		return errClosedArg(op, "the BufferPool is closed")
	}
	err := call(op, func() C.HurrayStatus { return C.hurray_stream_decoder_set_pool(r.ptr, pool.ptr) })
	runtime.KeepAlive(r)
	runtime.KeepAlive(pool)
	if err == nil {
		r.pooled = true
	}
	return err
}
