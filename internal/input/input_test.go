//go:build unix

package input

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// B8: a token or CA file must be a regular file of bounded size: a FIFO (which blocks the run
// before --timeout or a signal can end it) and a device (/dev/zero: memory without end) are
// refused with one line.
func TestReadCredentialFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A writer that has written a token: a FIFO read would succeed, and must not be tried.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("token-through-a-fifo\n"); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, maxCredentialFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "token")
	if err := os.WriteFile(good, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, wantErr string }{
		{fifo, "--metrics-token-file " + fifo + " is not a regular file (a FIFO)"},
		{"/dev/zero", "is not a regular file (a device)"},
		{dir, "is not a regular file (a directory)"},
		{big, "more than the 1024 KiB a token or CA file may have"},
		{filepath.Join(dir, "none"), "no such file or directory"},
		{good, ""},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() {
			_, err := ReadCredentialFile("--metrics-token-file", tt.path)
			done <- err
		}()
		select {
		case err := <-done:
			if (tt.wantErr == "" && err != nil) || (tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr))) {
				t.Errorf("%s: %v, want %q", tt.path, err, tt.wantErr)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10s", tt.path)
		}
	}
}

// B8: report and replay of a FIFO end when the run is stopped (a signal, --timeout): while the
// open waits for a writer, and while a read waits for a line.
func TestOpenInputHonoursContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("interrupt signal received")) })
	if _, _, _, err := Open(ctx, fifo, nil); err == nil || !strings.Contains(err.Error(), "interrupt signal received while waiting for a writer") {
		t.Errorf("open of a FIFO without a writer: %v", err)
	}

	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel = context.WithCancelCause(context.Background())
	in, _, closeIn, err := Open(ctx, fifo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeIn()
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("terminated")) })
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(in)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped: terminated") {
			t.Errorf("read of a silent FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read of a FIFO went on 10s after the run was stopped")
	}
}
