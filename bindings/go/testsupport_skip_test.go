//go:build !hurray_testsupport

package hurray

import "testing"

// TestReleaseOnCThread needs the C helpers behind the hurray_testsupport tag; see
// testsupport_test.go.
func TestReleaseOnCThread(t *testing.T) {
	t.Skip("destroying tensors on C threads needs the C test helpers: run go test -tags hurray_testsupport")
}
