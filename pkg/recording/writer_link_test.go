package recording

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// L13: --record through a symbolic link neither truncates nor chmods the link's target.
func TestCreateRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "rec.ndjson")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	w, err := Create(link, Header{}, nil, Options{})
	if err == nil {
		w.Close()
		t.Fatal("a recording was written through a symbolic link")
	}
	if !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("error %q", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the target now holds %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("the target's mode is now %v", fi.Mode().Perm())
	}
}
