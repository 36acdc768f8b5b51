//go:build !unix

package watchrun

import (
	"context"
	"io"
)

// watchClosedStdout is a no-op where poll(2) is not available; a closed stdout is then noticed
// at the next write.
func watchClosedStdout(context.Context, io.Writer, func()) {}
