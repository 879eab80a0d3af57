package main

// The network column (tests/matrix/README.md): net-get fetches every case's items
// from a server with the Go client and writes them as the producer would; net-put
// puts every item of the Rust producer's files; net-views is the demo's network
// step.

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	hurray "github.com/hurray-dev/hurray/bindings/go"
)

// netKey is the server's key of a case's top-level item.
func netKey(c *Case, name string) string { return c.Name + ":" + name }

// netGet writes dir/CASE.hrry for every case: its items fetched from addr under
// "CASE:NAME", in the case's order, then the case's KV metadata (which the
// protocol does not carry), with the producer's writer options, so the bytes can
// equal the producer's. A case the server does not have (the Rust producer wrote
// .na for it) gets dir/CASE.hrry.na.
func netGet(addr string, cases []*Case, dir string) error {
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	c, err := hurray.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	failed := 0
	for _, cs := range cases {
		err := safely(func() error { return netGetCase(ctx, c, cs, dir) })
		if err != nil {
			fmt.Fprintf(os.Stderr, "go net-get: case %s: %v\n", cs.Name, err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cases failed", failed, len(cases))
	}
	return nil
}

func netGetCase(ctx context.Context, c *hurray.Client, cs *Case, dir string) error {
	var items []*hurray.Item
	defer func() {
		for _, it := range items {
			it.Close()
		}
	}()
	for _, s := range cs.Items {
		it, err := c.Get(ctx, netKey(cs, s.Name))
		if errors.Is(err, hurray.ErrNotFound) {
			reason := fmt.Sprintf("the server has no %q: %v\n", netKey(cs, s.Name), err)
			return os.WriteFile(filepath.Join(dir, cs.Name+".hrry.na"), []byte(reason), 0o666)
		}
		if err != nil {
			return err
		}
		items = append(items, it)
	}
	w, err := hurray.CreateFile(filepath.Join(dir, cs.Name+".hrry"), &hurray.WriteOptions{NoSync: true})
	if err != nil {
		return err
	}
	for i, s := range cs.Items {
		if err := w.WriteItem(s.Name, items[i]); err != nil {
			w.Abort()
			return err
		}
	}
	for _, kv := range cs.KV {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// deviceUnavailable is the B.16 ERROR code a server answers a PUT of non-host
// memory with.
const deviceUnavailable = 0x05

// netPut puts every top-level item of dir/CASE.hrry under "CASE:NAME" (composites
// as composites). A case without a file (the producer wrote .na) is skipped, and
// one the server refuses as DEVICE_UNAVAILABLE is reported n/a on stdout.
func netPut(addr string, cases []*Case, dir string) error {
	ctx := context.Background()
	c, err := hurray.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	failed := 0
	for _, cs := range cases {
		path := filepath.Join(dir, cs.Name+".hrry")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		err := safely(func() error {
			f, err := hurray.OpenFile(path)
			if err != nil {
				return err
			}
			defer f.Close()
			for _, s := range cs.Items {
				it, err := f.Item(s.Name)
				if err != nil {
					return err
				}
				err = c.PutItem(ctx, netKey(cs, s.Name), it)
				it.Close()
				var e *hurray.Error
				if errors.As(err, &e) && e.NetCode == deviceUnavailable {
					// Not host memory: the protocol carries host buffers only.
					fmt.Printf("go net-put: case %s: n/a: %v\n", cs.Name, err)
					return nil
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "go net-put: case %s: %v\n", cs.Name, err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cases failed", failed, len(cases))
	}
	return nil
}

// netViews is the demo's network step: it reads path only for its tensor names
// (index order), GETs each from addr over one connection and prints "view NAME
// CRC32" (as views: CRC-32 of the buffers' bytes, in order) and "time SECONDS"
// (connect plus every GET).
func netViews(addr, path string) error {
	f, err := hurray.OpenFile(path)
	if err != nil {
		return err
	}
	names := f.Names()
	if err := f.Close(); err != nil {
		return err
	}
	ctx := context.Background()
	t0 := time.Now()
	c, err := hurray.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	items := make([]*hurray.Item, 0, len(names))
	defer func() {
		for _, it := range items {
			it.Close()
		}
	}()
	for _, n := range names {
		it, err := c.Get(ctx, n)
		if err != nil {
			return fmt.Errorf("GET %q: %w", n, err)
		}
		items = append(items, it)
	}
	secs := time.Since(t0).Seconds()
	for i, n := range names {
		t := items[i].Tensor()
		var crc uint32
		for b := 0; b < t.NumBuffers(); b++ {
			// Zero-copy: the item is open until netViews returns, and the view is
			// not kept past this loop.
			crc = crc32.Update(crc, crc32.IEEETable, t.UnsafeBytes(b))
		}
		fmt.Printf("view\t%s\t%08x\n", n, crc)
	}
	fmt.Printf("time\t%.6f\n", secs)
	return nil
}
