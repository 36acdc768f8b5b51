package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// A replay's lines are joined to an audit log read once, in order: a write half an hour and
// thousands of writes after the first is still found (the log is read up to each line's time,
// not held whole: one event read ahead at most), a line recorded with its audit event keeps it,
// and a line over MaxLine is skipped.
func TestRecordedJoinsInOrder(t *testing.T) {
	var log strings.Builder
	log.WriteString(line("a1", "create", "alice", "cm", "10", 0, 201) + "\n")
	log.WriteString(`{"verb":"update","padding":"` + strings.Repeat("x", MaxLine) + `"}` + "\n")
	for i := range 3000 {
		log.WriteString(line(fmt.Sprintf("o%d", i), "update", "noise", fmt.Sprintf("other-%d", i), fmt.Sprint(100+i), time.Minute+time.Duration(i)*500*time.Millisecond, 200) + "\n")
	}
	log.WriteString(line("a2", "update", "bob", "cm", "5000", 30*time.Minute, 200) + "\n")
	log.WriteString(line("a3", "delete", "carol", "cm", "", 31*time.Minute, 200))
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var notices []string
	rec, err := OpenRecorded(path, func(s string) { notices = append(notices, s) })
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	recorded := objectLine(watch.Updated, "cm", "10", "11", 10*time.Second)
	recorded.Obj.Audit = &watch.AuditInfo{User: "dave", Matched: watch.AuditByResourceVersion}
	lines := []watch.Event{
		objectLine(watch.Added, "cm", "", "10", 0),
		recorded,
		objectLine(watch.Updated, "other-5", "104", "105", time.Minute+2500*time.Millisecond),
		objectLine(watch.Updated, "cm", "11", "5000", 30*time.Minute),
		objectLine(watch.Deleted, "cm", "", "5001", 31*time.Minute),
	}
	for i := range lines {
		rec.Join(&lines[i])
		if len(rec.ahead) > 1 {
			t.Fatalf("line %d: %d audit events read ahead, want at most 1", i, len(rec.ahead))
		}
	}
	got := strings.Join(who(lines), "\n")
	want := strings.Join([]string{
		"Added cm rv=10: alice create a1 by resourceVersion",
		"Updated cm rv=11: dave   by resourceVersion",
		"Updated other-5 rv=105: noise update o5 by resourceVersion",
		"Updated cm rv=5000: bob update a2 by resourceVersion",
		"Deleted cm rv=5001: carol delete a3 by delete",
	}, "\n")
	if got != want {
		t.Errorf("joined:\n%s\nwant:\n%s", got, want)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "longer than") {
		t.Errorf("notices %q, want the long line said once", notices)
	}
}

// A replay reads its audit log to the end: a FIFO (or a device) is refused, in one line.
func TestRecordedRefusesAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := OpenRecorded(fifo, nil) // no writer: opening it would wait for one
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		// It opened the FIFO and waits for a writer: release it, and fail.
		if w, werr := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); werr == nil {
			_ = w.Close()
		}
		t.Fatal("OpenRecorded is waiting on a FIFO")
	}
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO: %v, want refused as not a regular file", err)
	}
}
