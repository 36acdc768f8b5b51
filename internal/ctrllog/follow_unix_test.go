//go:build unix

package ctrllog

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A FIFO as --controller-logs (HOSTILE-CASES-2 F4) is read as a stream, and the run's end (the
// context: --timeout, a signal) ends the reading: with no writer, with a writer that wrote and
// went silent, and after the writer left. Opening it waited for a writer that never came, and
// Runner.Drain waited for that.
func TestFollowFIFOEndsWithTheContext(t *testing.T) {
	for _, writer := range []string{"none", "silent", "gone"} {
		t.Run(writer, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ctl.fifo")
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var got []string
			done := make(chan error, 1)
			go func() {
				done <- Follow(ctx, path, func(b []byte, _ time.Time) {
					mu.Lock()
					got = append(got, string(b))
					mu.Unlock()
				}, nil)
			}()
			if writer == "none" {
				awaitOpen(t, path) // not waiting for a writer to come
			} else {
				w, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for Follow to open it
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				if _, err := w.WriteString("one\ntwo\n"); err != nil {
					t.Fatal(err)
				}
				awaitLines(t, &mu, &got, 2)
				if writer == "gone" {
					w.Close()
				}
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Follow: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Follow of a FIFO did not return within 10s of the context's end")
			}
		})
	}
}

// awaitOpen waits (10s at most) for this process to hold path open (Linux's /proc; elsewhere it
// does not wait).
func awaitOpen(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return
		}
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); l == path {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not open within 10s: opening it waits for a writer", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitLines waits (10s at most) for got to hold n lines.
func awaitLines(t *testing.T, mu *sync.Mutex, got *[]string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		l := len(*got)
		mu.Unlock()
		if l >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lines within 10s, want %d: %q", l, n, *got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
