//go:build !unix

package input

import "os"

// pollable returns f.
func pollable(f *os.File) *os.File { return f }
