package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hidden --memprofile (for make bench and bug reports) writes a heap profile when the
// initial lists are in (FILE.synced: the informers' peak, as the cache is full and the lists'
// objects are being handed on) and when the run ends (FILE).
func TestMemProfileAtSyncAndExit(t *testing.T) {
	ns := newNamespace(t, cluster)
	createConfigMaps(t, cluster.Clientset, ns, "a", "b")
	file := filepath.Join(t.TempDir(), "heap.pprof")
	p := cluster.RunPlugin(t, context.Background(), "watch", "cm", "-n", ns, "-o", "json", "--memprofile", file)
	p.AwaitJSON(t, await, is("Synced", ""))
	// Written before the Synced line is handed to the output.
	wantHeapProfile(t, file+".synced")
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("%s written before the run ended", file)
	}
	p.Stop(t)
	wantHeapProfile(t, file)
}

// wantHeapProfile checks that path holds a heap profile as runtime/pprof writes it: gzipped
// protobuf naming the sample types of a heap profile.
func wantHeapProfile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not gzipped: %v", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, s := range []string{"inuse_space", "alloc_space"} {
		if !strings.Contains(string(raw), s) {
			t.Errorf("%s: no %s sample type; not a heap profile", path, s)
		}
	}
}
