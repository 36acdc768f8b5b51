package audit

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A log rotated mid-line (the API server's log renamed while a line was half written, a new file
// in its place): the half line is dropped without a notice, the new file read from its start.
func TestFollowRotatedMidLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	full := request("a", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200)
	half := request("b", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200)
	if err := os.WriteFile(path, []byte(full+"\n"+half[:len(half)/2]), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var ids, notices []string
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, func(e *Event) {
			mu.Lock()
			ids = append(ids, e.AuditID)
			mu.Unlock()
			got <- e.AuditID
		}, func(s string) {
			mu.Lock()
			notices = append(notices, s)
			mu.Unlock()
		})
	}()
	if id := <-got; id != "a" {
		t.Fatalf("first event %q", id)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	next := request("c", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200)
	if err := os.WriteFile(path, []byte(next+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != "c" {
			t.Errorf("after the rotation: %q, want c", id)
		}
	case <-ctx.Done():
		t.Fatal("the new file was not read")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notices) != 0 || len(ids) != 2 {
		t.Errorf("events %v, notices %q", ids, notices)
	}
}
