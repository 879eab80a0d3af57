// Command net_get times GETs over the network with the Go client (issue 18's
// throughput check; `cargo xtask bench` runs it beside the other languages):
//
//	go run ./bench/net_get.go ADDR KEY [REPEATS]
//
// It connects to the server at ADDR (host:port), gets KEY REPEATS times (default 3)
// on that connection, as the other languages' scripts do, and prints one line
// "net_get go BYTES SECONDS": the data bytes received (every buffer of every tensor
// of the item) and the wall time of the fastest Get (connect excluded).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	hurray "github.com/hurray-dev/hurray/bindings/go"
)

// dataBytes sums the buffer sizes of it and its members.
func dataBytes(it *hurray.Item) uint64 {
	t := it.Tensor()
	var n uint64
	for i := 0; i < t.NumBuffers(); i++ {
		n += t.Buffer(i).Size
	}
	for _, m := range it.Members() {
		n += dataBytes(m)
	}
	return n
}

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: net_get ADDR KEY [REPEATS]")
		os.Exit(2)
	}
	repeats := 3
	if len(os.Args) == 4 {
		n, err := strconv.Atoi(os.Args[3])
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "net_get: REPEATS must be a positive integer")
			os.Exit(2)
		}
		repeats = n
	}
	ctx := context.Background()
	c, err := hurray.Dial(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "net_get:", err)
		os.Exit(1)
	}
	defer c.Close()
	best, bytes := 0.0, uint64(0)
	for r := 0; r < repeats; r++ {
		start := time.Now()
		it, err := c.Get(ctx, os.Args[2])
		secs := time.Since(start).Seconds()
		if err != nil {
			fmt.Fprintln(os.Stderr, "net_get:", err)
			os.Exit(1)
		}
		bytes = dataBytes(it)
		it.Close()
		if r == 0 || secs < best {
			best = secs
		}
	}
	fmt.Printf("net_get go %d %.6f\n", bytes, best)
}
