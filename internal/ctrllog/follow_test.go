package ctrllog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// A log emptied in place (logrotate's copytruncate) and written again past where the reader
// was before it looks at the file again is read from its start: the bytes before its offset are
// no longer the ones it read. A writer that is busy makes this the usual case.
func TestFollowTruncatedAndRegrown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mgr.log")
	if err := os.WriteFile(path, []byte("I1126 14:33:38.004297   1 main.go:281] \"Successfully synced\" objectName=\"ns/a\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, func(b []byte, _ time.Time) { got <- string(b) }, nil)
	}()
	next := func() string {
		t.Helper()
		select {
		case l := <-got:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no line within 10s")
			return ""
		}
	}
	if l := next(); !strings.Contains(l, "ns/a") {
		t.Fatalf("first line %q", l)
	}
	// Emptied and written again, longer than before, in one go: at no poll is it shorter than
	// the offset already read.
	var again strings.Builder
	for i := range 3 {
		fmt.Fprintf(&again, "I1126 14:33:39.00000%d   1 main.go:281] \"Successfully synced\" objectName=\"ns/b%d\"\n", i, i)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(again.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for i := range 3 {
		if l, want := next(), fmt.Sprintf("objectName=\"ns/b%d\"", i); !strings.HasSuffix(l, want) {
			t.Fatalf("line %d after the truncation: %q, want the whole line ending %s", i, l, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Lines written before the run stops are read, though the stop comes within the poll's wait.
func TestFollowReadsToTheEndWhenStopped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mgr.log")
	if err := os.WriteFile(path, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, path, func(b []byte, _ time.Time) { got <- string(b) }, nil) }()
	if l := <-got; l != "first" {
		t.Fatalf("first line %q", l)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("last\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-got:
		if l != "last" {
			t.Errorf("line %q, want last", l)
		}
	default:
		t.Error("the line written before the stop was not read")
	}
}

// --controller-logs - (HOSTILE-CASES-2 F5): a line over maxLine is cut there, as a followed
// file's is, and the lines after it are read; it ended the reading of standard input, silently.
func TestReadStreamLongLine(t *testing.T) {
	long := strings.Repeat("x", 2<<20)
	in := "s1\n" + long + "\ns2\ns3"
	var got []string
	if err := ReadStream(context.Background(), strings.NewReader(in), func(b []byte, _ time.Time) { got = append(got, string(b)) }); err != nil {
		t.Fatal(err)
	}
	var short []string
	cut := 0
	for _, l := range got {
		if len(l) > maxLine {
			t.Fatalf("a line of %d bytes, more than maxLine", len(l))
		}
		if strings.HasPrefix(l, "x") {
			cut++
			continue
		}
		short = append(short, l)
	}
	if fmt.Sprint(short) != "[s1 s2 s3]" || cut == 0 {
		t.Errorf("lines %q and %d pieces of the long one, want s1, s2, s3 and the long one cut", short, cut)
	}
}
