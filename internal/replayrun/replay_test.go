package replayrun

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// B4: replay to a full disk is one error line and a failure, not a silent success.
func TestReplayStdoutFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	defer full.Close()
	file := filepath.Join(t.TempDir(), "r.ndjson")
	if err := os.WriteFile(file, []byte(`{"time":"2026-11-25T02:06:13.05Z","type":"Error","reason":"Forbidden","message":"m","verb":"list"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, output := range []printer.OutputFormat{"", "json"} {
		var errb bytes.Buffer
		err := Run(context.Background(), Config{File: file, In: strings.NewReader(""), Out: full, ErrOut: &errb,
			Printer: printer.Options{Output: output, Timestamps: "absolute", ErrOut: io.Discard}, Fold: 0})
		if err == nil || !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("replay -o %q > /dev/full: err %v, want no space left on device", output, err)
		}
	}
}
