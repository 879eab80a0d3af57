package main

// The Go consumer of the hostile corpus (tests/matrix/rust/src/hostile.rs):
//
//	go-matrix hostile DIR
//
// For every line "CASE RULE ..." of DIR/manifest.tsv it opens DIR/CASE.hrry with
// hurray.OpenFile and takes every item by name (File.Item) with a []byte view of
// every buffer of it and its members (Tensor.Bytes, every byte read), then reads
// DIR/CASE.hrrys to io.EOF with hurray.NewReader, viewing every item the same way.
// A container passes when the read failed with an error matching hurray.ErrFormat
// whose message names RULE:
//
//	result  hostile  file|stream  CASE  pass|fail  DETAIL

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	hurray "github.com/hurray-dev/hurray/bindings/go"
)

// sink is folded over every viewed byte so each view is really read.
var sink byte

// viewItem views every buffer of the item's tensor and of its members.
func viewItem(it *hurray.Item) {
	t := it.Tensor()
	for b := 0; b < t.NumBuffers(); b++ {
		_ = t.WithBytes(b, func(bytes []byte) error {
			for _, x := range bytes {
				sink ^= x
			}
			return nil
		})
	}
	for m := 0; m < it.Len(); m++ {
		viewItem(it.Member(m))
	}
}

func hostileFile(path string) error {
	f, err := hurray.OpenFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, name := range f.Names() {
		it, err := f.Item(name)
		if err != nil {
			return err
		}
		viewItem(it)
		it.Close()
	}
	return nil
}

func hostileStream(path string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	r := hurray.NewReader(bufio.NewReader(file))
	defer r.Close()
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		viewItem(it)
		it.Close()
	}
}

// judgeHostile is "pass" when err is a hurray.ErrFormat error naming rule.
func judgeHostile(rule string, err error) (string, string) {
	if err == nil {
		return "fail", "read without error; expected " + rule
	}
	msg := err.Error()
	var he *hurray.Error
	if errors.As(err, &he) && errors.Is(err, hurray.ErrFormat) && strings.Contains(he.Message, rule) {
		return "pass", msg
	}
	return "fail", fmt.Sprintf("expected an ErrFormat error naming %s, got %T: %s", rule, err, msg)
}

func hostile(dir string) error {
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return err
	}
	clean := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
	for _, line := range strings.Split(string(manifest), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 2 || f[0] == "" {
			continue
		}
		name, rule := f[0], f[1]
		for _, k := range []struct {
			container, ext string
			read           func(string) error
		}{{"file", "hrry", hostileFile}, {"stream", "hrrys", hostileStream}} {
			path := filepath.Join(dir, name+"."+k.ext)
			status, detail := judgeHostile(rule, safely(func() error { return k.read(path) }))
			fmt.Printf("result\thostile\t%s\t%s\t%s\t%s\n", k.container, name, status, clean.Replace(detail))
		}
	}
	return nil
}
