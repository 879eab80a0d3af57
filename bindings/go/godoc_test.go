package hurray

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestGoDocShowsValuesAndExamples: `go doc` shows every constant's value (Go
// literals, never C.HURRAY_*), and the doc comments carry the usage examples.
func TestGoDocShowsValuesAndExamples(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "doc", "-all", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go doc -all: %v\n%s", err, out)
	}
	doc := string(out)
	if i := strings.Index(doc, "= C."); i >= 0 {
		t.Errorf("go doc shows a C constant instead of a value: %q", doc[max(0, i-40):min(len(doc), i+40)])
	}
	for _, want := range []string{
		`StatusTruncated\s+Status = -25`, `StatusOK\s+Status = 0`, `Float32\s+DType = 0x03`,
		`BFloat16\s+DType = 0x02`, `CSR\s+Layout = 0x07`, `KVFused\s+KVRole = 2`,
		`StatNaNInf\s+StatMask = 32`, `CombineAdd\s+CombineOp = 2`, `ScaleBF16\s+ScaleType = 2`,
		`TileNested\s+TileOrder = 4`,
		// Examples in the doc comments.
		`t\.WithFloat32s\(func\(v \[\]float32\) error`,
		`hurray\.NewDense\(bits, nil, hurray\.AsDType\(hurray\.Float16\)\)`,
		`w, err := hurray\.CreateFile\("model\.hrry", nil\)`,
		`f, err := hurray\.OpenFile\("model\.hrry"\)`,
	} {
		if !regexp.MustCompile(want).MatchString(doc) {
			t.Errorf("go doc -all lacks %s", want)
		}
	}
}
