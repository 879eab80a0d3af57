package hurray

import (
	"bytes"
	"io"
	"path/filepath"
	"sync"
	"testing"
)

// TestConcurrentUse (run under -race by `cargo xtask test`): one File shared by
// several goroutines; tensors handed between goroutines and closed by others;
// stream readers on their own goroutines feeding items to consumers; concurrent
// double Close.
func TestConcurrentUse(t *testing.T) {
	requireNoLeaks(t)
	path := filepath.Join(t.TempDir(), "many.hrry")
	fw, err := CreateFile(path, &WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var stream bytes.Buffer
	sw := NewWriter(&stream)
	for i := 0; i < n; i++ {
		x, err := NewDense(fill(256, float32(i*1000)), []uint64{16, 16})
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteTensor(name(i), x); err != nil {
			t.Fatal(err)
		}
		if err := sw.WriteTensor(x); err != nil {
			t.Fatal(err)
		}
		x.Close()
	}
	sw.Close()
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}

	check := func(x *Tensor, first float32) {
		v, err := x.Float32s()
		if err != nil {
			t.Error(err)
			return
		}
		if len(v) != 256 || v[0] != first || v[255] != first+255 {
			t.Errorf("values [%v .. %v], want [%v ..]", v[0], v[len(v)-1], first)
		}
	}

	// Producers take tensors from the shared File; consumers on other goroutines
	// check and close them.
	type job struct {
		x     *Tensor
		first float32
	}
	tensors := make(chan job)
	var producers, consumers sync.WaitGroup
	for g := 0; g < 4; g++ {
		producers.Add(1)
		go func(g int) {
			defer producers.Done()
			for i := g; i < n; i += 4 {
				x, err := f.Tensor(name(i))
				if err != nil {
					t.Error(err)
					return
				}
				_ = f.Names()
				tensors <- job{x, float32(i * 1000)}
			}
		}(g)
	}
	for g := 0; g < 3; g++ {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for j := range tensors {
				x := j.x
				check(x, j.first)
				// Two goroutines racing to Close the same tensor: one closes it, the
				// other finds it closed; both return nil.
				var both sync.WaitGroup
				for k := 0; k < 2; k++ {
					both.Add(1)
					go func() {
						defer both.Done()
						if err := x.Close(); err != nil {
							t.Error(err)
						}
					}()
				}
				both.Wait()
			}
		}()
	}
	producers.Wait()
	close(tensors)
	consumers.Wait()

	// The File is closed from another goroutine than the ones that used it.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	<-done

	// Stream readers: each on its own goroutine, items checked and closed on
	// others, the Reader closed by yet another goroutine.
	var readers sync.WaitGroup
	for g := 0; g < 3; g++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			r := NewReader(bytes.NewReader(stream.Bytes()))
			type job struct {
				it    *Item
				first float32
			}
			items := make(chan job, 4)
			var consumer sync.WaitGroup
			consumer.Add(1)
			go func() {
				defer consumer.Done()
				for j := range items {
					check(j.it.Tensor(), j.first)
					if err := j.it.Close(); err != nil {
						t.Error(err)
					}
				}
			}()
			count := 0
			for {
				it, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Error(err)
					break
				}
				items <- job{it, float32(count * 1000)}
				count++
			}
			close(items)
			consumer.Wait()
			if count != n {
				t.Errorf("read %d items, want %d", count, n)
			}
			closed := make(chan error)
			go func() { closed <- r.Close() }()
			if err := <-closed; err != nil {
				t.Error(err)
			}
		}()
	}
	readers.Wait()
	requireNoLeaks(t)
}

func name(i int) string { return "tensor-" + string(rune('a'+i)) }
