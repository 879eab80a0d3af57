package hurray

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

type manifest struct {
	Descriptors []struct {
		File   string `json:"file"`
		Expect struct {
			VersionMajor    uint8    `json:"version_major"`
			VersionMinor    uint8    `json:"version_minor"`
			ElementTypeTag  uint8    `json:"element_type_tag"`
			ElementType     string   `json:"element_type"`
			Shape           []uint64 `json:"shape"`
			ByteOffset      uint64   `json:"byte_offset"`
			LayoutTag       uint8    `json:"layout_tag"`
			BufferByteSizes []uint64 `json:"buffer_byte_sizes"`
			HasQuantization bool     `json:"has_quantization"`
			HasShard        bool     `json:"has_shard"`
		} `json:"expect"`
	} `json:"descriptors"`
	Files []struct {
		File    string `json:"file"`
		Tensors []struct {
			Name           string   `json:"name"`
			ElementType    string   `json:"element_type"`
			ElementTypeTag uint8    `json:"element_type_tag"`
			Shape          []uint64 `json:"shape"`
			DataBytes      uint64   `json:"data_bytes"`
		} `json:"tensors"`
		KV []struct {
			Key         string  `json:"key"`
			Kind        string  `json:"kind"`
			ValueString *string `json:"value_string"`
			ValueInt    *int64  `json:"value_int"`
		} `json:"kv"`
	} `json:"files"`
}

func loadManifest(t *testing.T) (string, manifest) {
	dir := conformanceDir(t)
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// TestConformanceFiles opens every file of the manifest (basic.hrry) and checks
// names, element types, shapes, data sizes and KV entries, reading the data through
// zero-copy views.
func TestConformanceFiles(t *testing.T) {
	dir, m := loadManifest(t)
	if len(m.Files) == 0 {
		t.Fatal("manifest lists no files")
	}
	for _, mf := range m.Files {
		t.Run(mf.File, func(t *testing.T) {
			f, err := OpenFile(filepath.Join(dir, mf.File))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			names := f.Names()
			if len(names) != len(mf.Tensors) {
				t.Fatalf("names %v, manifest lists %d tensors", names, len(mf.Tensors))
			}
			if info := f.Info(); info.TensorCount != uint64(len(mf.Tensors)) || info.KVCount != uint64(len(mf.KV)) {
				t.Errorf("info %+v", info)
			}
			for i, want := range mf.Tensors {
				if names[i] != want.Name {
					t.Errorf("name %d = %q, want %q", i, names[i], want.Name)
				}
				d, err := f.Descriptor(want.Name)
				if err != nil {
					t.Fatal(err)
				}
				tensor, err := f.Tensor(want.Name)
				if err != nil {
					t.Fatal(err)
				}
				if tensor.DType() != DType(want.ElementTypeTag) || tensor.DType().String() != want.ElementType || d.DType != tensor.DType() {
					t.Errorf("%s: dtype %v, want %s (%d)", want.Name, tensor.DType(), want.ElementType, want.ElementTypeTag)
				}
				if !equalSlices(tensor.Shape(), want.Shape) || !equalSlices(d.Shape, want.Shape) {
					t.Errorf("%s: shape %v, want %v", want.Name, tensor.Shape(), want.Shape)
				}
				if tensor.Layout() != RowMajor || tensor.NumBuffers() != 1 || tensor.Device() != CPU {
					t.Errorf("%s: layout %v, %d buffers on %v", want.Name, tensor.Layout(), tensor.NumBuffers(), tensor.Device())
				}
				if got := uint64(len(tensor.Bytes(0))); got != want.DataBytes || tensor.Buffer(0).Size != want.DataBytes {
					t.Errorf("%s: %d data bytes, want %d", want.Name, got, want.DataBytes)
				}
				switch want.ElementType {
				case "float32":
					v, err := tensor.Float32s()
					if err != nil || len(v) != int(want.DataBytes/4) {
						t.Errorf("%s: Float32s() = %v, %v", want.Name, v, err)
					}
					if _, err := tensor.Int8s(); err == nil {
						t.Errorf("%s: Int8s() on float32 data succeeded", want.Name)
					}
				case "int8":
					v, err := tensor.Int8s()
					if err != nil || len(v) != int(want.DataBytes) {
						t.Errorf("%s: Int8s() = %v, %v", want.Name, v, err)
					}
				}
				if err := tensor.Close(); err != nil {
					t.Error(err)
				}
			}
			kv, err := f.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			if len(kv) != len(mf.KV) {
				t.Fatalf("metadata %v, manifest lists %d entries", kv, len(mf.KV))
			}
			for i, want := range mf.KV {
				if kv[i].Key != want.Key {
					t.Errorf("key %d = %q, want %q", i, kv[i].Key, want.Key)
				}
				var wantValue any
				switch want.Kind {
				case "string":
					wantValue = *want.ValueString
				case "int64":
					wantValue = *want.ValueInt
				default:
					t.Fatalf("manifest KV kind %q not handled by this test", want.Kind)
				}
				if kv[i].Value != wantValue {
					t.Errorf("%s = %#v, want %#v", want.Key, kv[i].Value, wantValue)
				}
				if v, err := f.Value(want.Key); err != nil || v != wantValue {
					t.Errorf("Value(%q) = %#v, %v", want.Key, v, err)
				}
			}
			if _, err := f.Value("no such key"); !isStatus(err, StatusNotFound) {
				t.Errorf("Value(missing) error = %v, want ErrNotFound", err)
			}
			if _, err := f.Tensor("no such tensor"); !isStatus(err, StatusNotFound) {
				t.Errorf("Tensor(missing) error = %v, want ErrNotFound", err)
			}
		})
	}
	requireNoLeaks(t)
}

// TestConformanceDescriptors decodes every descriptor vector and compares it with
// the manifest, then re-encodes it byte for byte through hurray_descriptor_from_view.
func TestConformanceDescriptors(t *testing.T) {
	dir, m := loadManifest(t)
	for _, md := range m.Descriptors {
		t.Run(md.File, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, md.File))
			if err != nil {
				t.Fatal(err)
			}
			d, err := DecodeDescriptor(raw)
			if err != nil {
				t.Fatal(err)
			}
			e := md.Expect
			if d.DType != DType(e.ElementTypeTag) || d.DType.String() != e.ElementType || d.Layout != Layout(e.LayoutTag) ||
				!equalSlices(d.Shape, e.Shape) || d.ByteOffset != e.ByteOffset || d.VersionMinor != e.VersionMinor ||
				(d.Quantization != nil) != e.HasQuantization || (d.Shard != nil) != e.HasShard {
				t.Errorf("decoded %+v, manifest %+v", d, e)
			}
			var sizes []uint64
			for _, b := range d.Buffers {
				sizes = append(sizes, b.Size)
			}
			if len(sizes) != len(e.BufferByteSizes) || (len(sizes) > 0 && !equalSlices(sizes, e.BufferByteSizes)) {
				t.Errorf("buffer sizes %v, want %v", sizes, e.BufferByteSizes)
			}
			again, err := d.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(raw) {
				t.Errorf("re-encoded %d bytes differ from the %d-byte vector", len(again), len(raw))
			}
		})
	}
	requireNoLeaks(t)
}

func isStatus(err error, s Status) bool {
	return err != nil && errorsIs(err, &Error{Status: s})
}
