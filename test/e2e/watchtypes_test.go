package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// watch --types prints only the line types asked for, as replay --types does; --record and the
// summary still get everything.
func TestWatchTypes(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	createConfigMaps(t, cluster.Clientset, ns, "pre")
	file := filepath.Join(t.TempDir(), "rec.ndjson")
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--types", "deleted,Updated,Bookmark", "--record", file)
	human := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "--types", "Bookmark,Deleted", "--color", "never", "--no-headers")
	// The streaming list's end bookmark: the informer has synced.
	p.AwaitJSON(t, await, is("Bookmark", ""))
	awaitLine(t, human, "Bookmark")
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	createConfigMaps(t, cluster.Clientset, ns, "new")
	if _, err := cms.Patch(ctx, "new", types.MergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "pre", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, is("Deleted", "pre"))
	awaitLine(t, human, ns+"/pre")
	p.StopWith(t, syscall.SIGTERM)
	human.StopWith(t, syscall.SIGTERM)
	var got []string
	for _, l := range p.All() {
		var m map[string]any
		if err := jsonLine(l, &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		typ, _ := m["type"].(string)
		name, _ := m["name"].(string)
		if typ != "Bookmark" || len(got) == 0 { // later bookmarks come when the server sends them
			got = append(got, strings.TrimSpace(typ+" "+name))
		}
	}
	if want := "Bookmark|Updated new|Deleted pre"; strings.Join(got, "|") != want {
		t.Errorf("-o json --types deleted,Updated,Bookmark printed %q, want %q", strings.Join(got, "|"), want)
	}
	for _, l := range human.All() {
		if f := strings.Fields(string(l)); len(f) < 2 || (f[1] != "Bookmark" && f[1] != "Deleted") {
			t.Errorf("human --types Bookmark,Deleted printed %q", l)
		}
	}
	if !strings.Contains(p.Stderr(), "events: Added 2") {
		t.Errorf("the summary does not count what --types left out: %q", p.Stderr())
	}
	rec, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{`"type":"Informer"`, `"type":"Added"`, `"type":"Synced"`, `"type":"Updated"`} {
		if !strings.Contains(string(rec), typ) {
			t.Errorf("the recording has no %s line: --record keeps every line", typ)
		}
	}

	bad := runPlugin(t, cluster, "watch", "cm", "-n", ns, "--types", "Added,Teleported")
	if bad.code != 1 || !strings.HasPrefix(bad.stderr, `error: unknown type "Teleported" in --types; known types: Informer, Added,`) || bad.stdout != "" {
		t.Errorf("--types Teleported: exit %d, stdout %q, stderr %q", bad.code, bad.stdout, bad.stderr)
	}
}
