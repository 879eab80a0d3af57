package main

// The case list (tests/cases/cases.txt; syntax in tests/cases/README.md) as Go
// values: each tensor spec becomes the hurray.Descriptor it describes plus its bytes.

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	hurray "github.com/hurray-dev/hurray/bindings/go"
)

// Spec is a tensor or a composite head with its members.
type Spec struct {
	Name    string
	Desc    hurray.Descriptor
	Bytes   [][]byte
	Members []*Spec // composites only
	count   int     // members still expected while parsing
}

// IsComposite reports whether the spec is a composite head.
func (s *Spec) IsComposite() bool { return s.Desc.Layout == hurray.CompositeHead }

// Names appends the spec's names in pre-order.
func (s *Spec) Names(out []string) []string {
	out = append(out, s.Name)
	for _, m := range s.Members {
		out = m.Names(out)
	}
	return out
}

// KV is one file KV entry.
type KV struct {
	Key   string
	Value any // the Go types hurray.FileWriter.AddKV takes
}

// Case is one case.
type Case struct {
	Name  string
	Items []*Spec
	KV    []KV
}

var dtypes = map[string]hurray.DType{
	"float16": hurray.Float16, "bfloat16": hurray.BFloat16, "float32": hurray.Float32,
	"float64": hurray.Float64, "int8": hurray.Int8, "uint8": hurray.Uint8, "int16": hurray.Int16,
	"uint16": hurray.Uint16, "int32": hurray.Int32, "uint32": hurray.Uint32, "int64": hurray.Int64,
	"uint64": hurray.Uint64, "bool": hurray.Bool, "float8_e4m3": hurray.Float8E4M3,
	"float8_e5m2": hurray.Float8E5M2, "float8_e8m0": hurray.Float8E8M0,
	"float4_e2m1": hurray.Float4E2M1, "float6_e2m3": hurray.Float6E2M3,
	"float6_e3m2": hurray.Float6E3M2, "float128": hurray.Float128, "int4": hurray.Int4,
	"uint4": hurray.Uint4, "int2": hurray.Int2, "uint2": hurray.Uint2,
	"complex64": hurray.Complex64, "complex128": hurray.Complex128,
}

// splitmixBytes is the shared generator (tests/cases/README.md).
func splitmixBytes(seed uint64, n int) []byte {
	out := make([]byte, 0, n+8)
	s := seed
	for len(out) < n {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		out = binary.LittleEndian.AppendUint64(out, z^(z>>31))
	}
	return out[:n]
}

func unescape(tok string) string {
	if tok == "~" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] == '%' && i+2 < len(tok)+1 {
			v, err := strconv.ParseUint(tok[i+1:i+3], 16, 8)
			if err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(tok[i])
	}
	return b.String()
}

func hexBytes(tok string) []byte {
	if tok == "~" {
		return []byte{}
	}
	b, err := hex.DecodeString(tok)
	if err != nil {
		panic(fmt.Sprintf("bad hex %q", tok))
	}
	return b
}

func parseF64(tok string) float64 {
	if h, ok := strings.CutPrefix(tok, "bits:"); ok {
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			panic(err)
		}
		return math.Float64frombits(v)
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func u64(s string) uint64 {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("bad number %q", s))
	}
	return v
}

func i64(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("bad number %q", s))
	}
	return v
}

func u64s(s string) []uint64 {
	var out []uint64
	for _, v := range strings.Split(s, ",") {
		out = append(out, u64(v))
	}
	return out
}

func i64s(s string) []int64 {
	var out []int64
	for _, v := range strings.Split(s, ",") {
		out = append(out, i64(v))
	}
	return out
}

func u32s(s string) []uint32 {
	var out []uint32
	for _, v := range u64s(s) {
		out = append(out, uint32(v))
	}
	return out
}

func tileOrder(s string) (hurray.TileOrder, []int64) {
	switch {
	case s == "row_major":
		return hurray.TileRowMajor, nil
	case s == "col_major":
		return hurray.TileColumnMajor, nil
	case s == "tiled":
		return hurray.TileNested, nil
	case strings.HasPrefix(s, "strided:"):
		return hurray.TileStrided, i64s(s[8:])
	}
	panic("bad tile order " + s)
}

func fill(size uint64, t []string) []byte {
	n := int(size)
	var out []byte
	switch t[0] {
	case "zero":
		out = make([]byte, n)
	case "rand":
		out = splitmixBytes(u64(t[1]), n)
		if len(t) > 2 {
			bits := int(u64(strings.TrimPrefix(t[2], "bits=")))
			for i := bits; i < n*8; i++ {
				out[i/8] &^= 1 << (i % 8)
			}
		}
	case "randrange":
		lo, hi := u64(t[2]), u64(t[3])
		out = splitmixBytes(u64(t[1]), n)
		for i, g := range out {
			out[i] = byte(lo + uint64(g)%(hi-lo+1))
		}
	case "hex":
		out = hexBytes(strings.Join(t[1:], ""))
	default:
		for _, v := range t[1:] {
			switch t[0] {
			case "u8", "i8":
				out = append(out, byte(i64(v)))
			case "u16", "i16":
				out = binary.LittleEndian.AppendUint16(out, uint16(i64(v)))
			case "u32", "i32":
				out = binary.LittleEndian.AppendUint32(out, uint32(i64(v)))
			case "u64":
				out = binary.LittleEndian.AppendUint64(out, u64(v))
			case "i64":
				out = binary.LittleEndian.AppendUint64(out, uint64(i64(v)))
			case "f32":
				out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(parseF64(v))))
			case "f64":
				out = binary.LittleEndian.AppendUint64(out, math.Float64bits(parseF64(v)))
			default:
				panic("unknown fill " + t[0])
			}
		}
	}
	if len(out) != n {
		panic(fmt.Sprintf("fill gives %d bytes, the buffer has %d", len(out), n))
	}
	return out
}

func stats(t []string) *hurray.Statistics {
	s := &hurray.Statistics{}
	for _, tok := range t {
		k, v, _ := strings.Cut(tok, "=")
		switch k {
		case "nnz":
			s.NNZ, s.Mask = u64(v), s.Mask|hurray.StatNNZ
		case "sparsity":
			s.Sparsity, s.Mask = parseF64(v), s.Mask|hurray.StatSparsity
		case "min":
			s.Min, s.Mask = parseF64(v), s.Mask|hurray.StatValueRange
		case "max":
			s.Max = parseF64(v)
		case "absmax":
			s.AbsMax = parseF64(v)
		case "mean":
			s.Mean, s.Mask = parseF64(v), s.Mask|hurray.StatValueStats
		case "stddev":
			s.Stddev = parseF64(v)
		case "nm":
			n, m, _ := strings.Cut(v, ":")
			s.NMN, s.NMM, s.Mask = uint8(u64(n)), uint8(u64(m)), s.Mask|hurray.StatNMSparsity
		case "nan":
			s.HasNaN, s.Mask = v == "1", s.Mask|hurray.StatNaNInf
		case "inf":
			s.HasInf = v == "1"
		default:
			panic("unknown stat " + k)
		}
	}
	return s
}

func kvValue(t []string) any {
	typ, v := t[0], t[1:]
	one := func(kind, s string) any {
		switch kind {
		case "string":
			return unescape(s)
		case "int64":
			return i64(s)
		case "uint64":
			return u64(s)
		case "float64":
			return parseF64(s)
		case "bool":
			return s == "true"
		case "bytes":
			return hexBytes(s)
		}
		panic("unknown kv type " + kind)
	}
	elem, isArray := strings.CutPrefix(typ, "array:")
	if !isArray {
		return one(typ, v[0])
	}
	switch elem {
	case "string":
		out := []string{}
		for _, s := range v {
			out = append(out, unescape(s))
		}
		return out
	case "int64":
		out := []int64{}
		for _, s := range v {
			out = append(out, i64(s))
		}
		return out
	case "uint64":
		out := []uint64{}
		for _, s := range v {
			out = append(out, u64(s))
		}
		return out
	case "float64":
		out := []float64{}
		for _, s := range v {
			out = append(out, parseF64(s))
		}
		return out
	case "bool":
		out := []bool{}
		for _, s := range v {
			out = append(out, s == "true")
		}
		return out
	case "bytes":
		out := [][]byte{}
		for _, s := range v {
			out = append(out, hexBytes(s))
		}
		return out
	}
	panic("unknown kv type " + typ)
}

func layout(d *hurray.Descriptor, t []string) {
	a := t[1:]
	switch t[0] {
	case "row_major":
		d.Layout = hurray.RowMajor
	case "col_major":
		d.Layout = hurray.ColumnMajor
	case "strided":
		d.Layout, d.Strides = hurray.Strided, i64s(a[0])
	case "tiled":
		d.Layout = hurray.Tiled
	case "morton":
		d.Layout, d.MortonBits = hurray.Morton, u32s(a[0])
	case "hilbert":
		d.Layout = hurray.Hilbert
		d.Hilbert = &hurray.HilbertFields{Order: uint32(u64(a[0])), Rank: uint32(u64(a[1]))}
	case "coo":
		d.Layout, d.NNZ, d.COOSorted = hurray.COO, u64(a[0]), a[1] == "sorted"
	case "csr":
		d.Layout, d.NNZ = hurray.CSR, u64(a[0])
	case "csc":
		d.Layout, d.NNZ = hurray.CSC, u64(a[0])
	case "csf":
		d.Layout, d.NNZ, d.CSFModeOrder = hurray.CSF, u64(a[0]), u32s(a[1])
	case "block_paged":
		d.Layout = hurray.BlockPaged
		f := &hurray.BlockPagedFields{PageSize: uint32(u64(a[0])), NumPages: u64(a[1]),
			NumSeqs: uint32(u64(a[2])), LayerIndex: hurray.LayerIndexNone, Index64: a[5] == "u64"}
		f.KVRole = map[string]hurray.KVRole{"key": hurray.KVKey, "value": hurray.KVValue, "fused": hurray.KVFused}[a[3]]
		if a[4] != "none" {
			f.LayerIndex = uint32(u64(a[4]))
		}
		d.BlockPaged = f
	default:
		panic("unknown layout " + t[0])
	}
}

func quant(t []string) *hurray.Quantization {
	u := func(i int) uint32 { return uint32(u64(t[i])) }
	zp := func(i int) uint32 {
		if t[i] == "none" {
			return hurray.NoBuffer
		}
		return u(i)
	}
	q := &hurray.Quantization{Version: 1, ScaleBuffer: hurray.NoBuffer, ZeroPointBuffer: hurray.NoBuffer}
	switch t[0] {
	case "per_tensor":
		q.Scheme, q.Scale, q.ZeroPoint = hurray.PerTensorAffine, float32(parseF64(t[1])), int32(i64(t[2]))
	case "per_channel":
		q.Scheme, q.Axis, q.ScaleBuffer, q.ZeroPointBuffer, q.ScaleType =
			hurray.PerChannelAffine, u(1), u(2), zp(3), hurray.ScaleF32
	case "per_block":
		q.Scheme, q.Axis, q.BlockSize, q.ScaleBuffer, q.ZeroPointBuffer = hurray.PerBlockAffine, u(1), u(2), u(3), zp(4)
		q.ScaleType = map[string]hurray.ScaleType{"f16": hurray.ScaleF16, "bf16": hurray.ScaleBF16, "f32": hurray.ScaleF32}[t[5]]
	case "nf4":
		q.Scheme, q.Axis, q.BlockSize, q.ScaleBuffer = hurray.NF4, u(1), u(2), u(3)
	case "mxfp":
		q.Scheme, q.Axis, q.BlockSize, q.ScaleBuffer = hurray.MXFP, u(1), u(2), u(3)
	default:
		panic("unknown scheme " + t[0])
	}
	if (q.Scheme == hurray.PerChannelAffine || q.Scheme == hurray.PerBlockAffine) && q.ZeroPointBuffer == hurray.NoBuffer {
		q.Flags = 1 // symmetric
	}
	return q
}

// parseCases reads the case list.
func parseCases(path string) ([]*Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []*Case
	var cur *Spec
	var stack []*Spec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		toks := strings.Fields(sc.Text())
		if len(toks) == 0 || strings.HasPrefix(toks[0], "#") {
			continue
		}
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%s line %d: %v", path, line, r)
				}
			}()
			d, rest := toks[0], toks[1:]
			switch d {
			case "case":
				cases = append(cases, &Case{Name: rest[0]})
				cur, stack = nil, nil
			case "note":
			case "kv":
				c := cases[len(cases)-1]
				c.KV = append(c.KV, KV{Key: unescape(rest[0]), Value: kvValue(rest[1:])})
			case "tensor", "composite":
				s := &Spec{Name: unescape(rest[0])}
				s.Desc.DType = dtypes[rest[1]]
				if s.Desc.DType == 0 {
					panic("unknown dtype " + rest[1])
				}
				if rest[2] != "scalar" {
					s.Desc.Shape = u64s(rest[2])
				}
				if d == "tensor" {
					layout(&s.Desc, rest[3:])
				} else {
					s.Desc.Layout = hurray.CompositeHead
					s.count = int(u64(rest[5]))
					s.Desc.Composite = &hurray.CompositeFields{
						MemberCount: uint32(s.count),
						Rule:        map[string]hurray.CompositionRule{"partition": hurray.Partition, "overlay": hurray.Overlay, "group": hurray.Group}[rest[3]],
						Combine:     map[string]hurray.CombineOp{"none": hurray.CombineNone, "replace": hurray.CombineReplace, "add": hurray.CombineAdd}[rest[4]],
					}
				}
				if n := len(stack); n > 0 {
					stack[n-1].Members = append(stack[n-1].Members, s)
					stack[n-1].count--
				} else {
					c := cases[len(cases)-1]
					c.Items = append(c.Items, s)
				}
				for len(stack) > 0 && stack[len(stack)-1].count == 0 {
					stack = stack[:len(stack)-1]
				}
				if d == "composite" && s.count > 0 {
					stack = append(stack, s)
				}
				cur = s
			case "tile":
				o, os := tileOrder(rest[1])
				i, is := tileOrder(rest[2])
				cur.Desc.Tiling = append(cur.Desc.Tiling, hurray.TileLevel{Shape: u64s(rest[0]),
					OuterOrder: o, OuterStrides: os, InnerOrder: i, InnerStrides: is})
			case "offset":
				cur.Desc.ByteOffset = u64(rest[0])
			case "buffer":
				size := u64(rest[0])
				e := hurray.BufferEntry{Size: size, Alignment: 1, Device: hurray.CPU, Sync: hurray.ProducerSynced}
				if size > 0 {
					e.Alignment = 64
				}
				k := 1
				for ; k < len(rest); k++ {
					if a, ok := strings.CutPrefix(rest[k], "align="); ok {
						e.Alignment = uint32(u64(a))
					} else if m, ok := strings.CutPrefix(rest[k], "memory="); ok {
						e.Memory = map[string]hurray.MemoryClass{"standard": hurray.StandardMemory,
							"host_pinned": hurray.HostPinnedMemory, "unified": hurray.UnifiedMemory}[m]
					} else {
						break
					}
				}
				cur.Desc.Buffers = append(cur.Desc.Buffers, e)
				cur.Bytes = append(cur.Bytes, fill(size, rest[k:]))
			case "quant":
				cur.Desc.Quantization = quant(rest)
			case "shard":
				cur.Desc.Shard = &hurray.Shard{ParentShape: u64s(rest[0]), Offset: u64s(rest[1])}
			case "stats":
				cur.Desc.Statistics = stats(rest)
			case "role":
				cur.Desc.MemberRole = hurray.CorrectionMember
				if rest[0] == "base" {
					cur.Desc.MemberRole = hurray.BaseMember
				}
			default:
				panic("unknown directive " + d)
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	return cases, sc.Err()
}
