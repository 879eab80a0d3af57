//go:build hurray_includebuild

package hurray

// This file is never built (no one sets its tag). Its imports make `go mod vendor`
// copy the folders that hold the C header and the prebuilt static libraries, which
// contain no Go code of their own besides a placeholder package.

import (
	_ "github.com/hurray-dev/hurray/bindings/go/include"
	_ "github.com/hurray-dev/hurray/bindings/go/lib/darwin_amd64"
	_ "github.com/hurray-dev/hurray/bindings/go/lib/darwin_arm64"
	_ "github.com/hurray-dev/hurray/bindings/go/lib/linux_amd64"
	_ "github.com/hurray-dev/hurray/bindings/go/lib/linux_arm64"
)
