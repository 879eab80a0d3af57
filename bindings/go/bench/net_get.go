// Command net_get times one GET over the network with the Go client (issue 18's
// throughput check; `cargo xtask bench` runs it beside the other languages):
//
//	go run ./bench/net_get.go ADDR KEY
//
// It connects to the server at ADDR (host:port), gets KEY once, and prints one
// line "net_get go BYTES SECONDS": the data bytes received (every buffer of every
// tensor of the item) and the wall time of the Get alone (connect excluded).
package main

import (
	"context"
	"fmt"
	"os"
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
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: net_get ADDR KEY")
		os.Exit(2)
	}
	ctx := context.Background()
	c, err := hurray.Dial(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "net_get:", err)
		os.Exit(1)
	}
	defer c.Close()
	start := time.Now()
	it, err := c.Get(ctx, os.Args[2])
	secs := time.Since(start).Seconds()
	if err != nil {
		fmt.Fprintln(os.Stderr, "net_get:", err)
		os.Exit(1)
	}
	defer it.Close()
	fmt.Printf("net_get go %d %.6f\n", dataBytes(it), secs)
}
