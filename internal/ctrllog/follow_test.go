package ctrllog

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Follow reads a file as tail -F does: it waits for a missing file, reads what is appended,
// starts again after a truncation and reopens a replaced (rotated) file.
func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mgr.log")
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
	await := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			l := len(got)
			mu.Unlock()
			if l >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d lines within 10s, want %d: %q", l, n, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	write := func(flag int, s string) {
		t.Helper()
		f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write(os.O_APPEND, "one\ntw")
	await(1)
	write(os.O_APPEND, "o\n")
	await(2)
	write(os.O_TRUNC, "three\n") // truncated: read from its start
	await(3)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	write(os.O_APPEND, "four\n") // a new file by the old name
	await(4)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"one", "two", "three", "four"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("lines %q, want %q", got, want)
		}
	}
}
