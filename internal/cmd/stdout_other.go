//go:build !unix

package cmd

import (
	"context"
	"io"
	"os"
)

// watchClosedStdout is a no-op where poll(2) is not available; a closed stdout is then noticed
// at the next write.
func watchClosedStdout(context.Context, io.Writer, func()) {}

// pollable returns f.
func pollable(f *os.File) *os.File { return f }
