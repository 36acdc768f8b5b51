package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// step is one (type, name, resourceVersion) of the stream.
type step struct{ Type, Name, RV string }

func stepsOf(t *testing.T, lines []string) []step {
	t.Helper()
	var out []step
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, l)
		}
		name, _ := m["name"].(string)
		rv, _ := m["resourceVersion"].(string)
		out = append(out, step{m["type"].(string), name, rv})
	}
	return out
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// humanLine is a human line without what two runs cannot share: the time column, the queue
// depth (each run has its own simulated workers) and, for lifecycle lines, their details
// (durations).
var queueField = regexp.MustCompile(`  queue=\d+`)

func humanLine(l string) string {
	if strings.HasPrefix(l, "#") {
		return l
	}
	_, rest, _ := strings.Cut(l, "  ") // the time column
	rest = queueField.ReplaceAllString(rest, "")
	typ, _, _ := strings.Cut(rest, " ")
	switch typ {
	case "Added", "Updated", "Deleted":
		return rest
	}
	return typ
}

// sortLists sorts each run of lines delivered by one list: a streaming list's objects come in
// an order of client-go's own (a map's), so two live runs may differ there, and only there.
func sortLists(lines []string) []string {
	out := append([]string(nil), lines...)
	fromList := func(l string) bool {
		return strings.HasSuffix(l, "[initial list]") || strings.HasSuffix(l, "[RELIST]")
	}
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && fromList(out[j]) {
			j++
		}
		if j > i {
			slices.Sort(out[i:j])
			i = j
			continue
		}
		i++
	}
	return out
}

// Record a live watch with --record, then replay the file: the same lines through the same
// printers, and the replay's filters and damage handling on a real recording.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	cs := cluster.Clientset
	cms := cs.CoreV1().ConfigMaps(ns)
	createConfigMaps(t, cs, ns, "pre-a", "pre-b")
	file := filepath.Join(t.TempDir(), "cm.ndjson")
	live := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--record", file)
	human := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "--color", "never")
	live.AwaitJSON(t, await, is("Synced", ""))
	awaitLine(t, human, "cache synced")

	// Creates, updates and deletes; each awaited in the live stream, in order.
	createConfigMaps(t, cs, ns, "c1", "c2")
	live.AwaitJSON(t, await, is("Added", "c1"))
	live.AwaitJSON(t, await, is("Added", "c2"))
	for _, name := range []string{"c1", "pre-a", "c1"} {
		if _, err := cms.Patch(ctx, name, types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"v":"%s"}}`, strings.Repeat("x", len(name)+len(live.All())))), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		live.AwaitJSON(t, await, is("Updated", name))
	}
	for _, name := range []string{"c2", "pre-b"} {
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		live.AwaitJSON(t, await, is("Deleted", name))
	}
	createConfigMaps(t, cs, ns, "c3")
	live.AwaitJSON(t, await, is("Added", "c3"))
	awaitLine(t, human, ns+"/c3")

	live.Stop(t)
	human.Stop(t)
	liveLines, humanLines := live.Strings(), human.Strings()

	// The file: private, a header, then exactly the live stream.
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("recording mode %v, want 0600", st.Mode().Perm())
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fileLines := splitLines(string(raw))
	var header map[string]any
	if err := json.Unmarshal([]byte(fileLines[0]), &header); err != nil {
		t.Fatal(err)
	}
	wantField(t, header, "type", "Recording")
	wantField(t, header, "formatVersion", float64(1))
	wantField(t, header, "secretsRedacted", true)
	if sv, _ := header["serverVersion"].(string); !strings.HasPrefix(sv, "v1.") {
		t.Errorf("header serverVersion %q", sv)
	}
	if flags, _ := header["flags"].(map[string]any); flags["namespace"] != ns || flags["resources"] != "cm" {
		t.Errorf("header flags %v", header["flags"])
	}
	if res, _ := header["resources"].([]any); len(res) != 1 || res[0].(map[string]any)["resource"] != "configmaps" {
		t.Errorf("header resources %v", header["resources"])
	}
	if diff := cmpLines(liveLines, fileLines[1:]); diff != "" {
		t.Errorf("the recording is not the live stream:\n%s", diff)
	}

	// replay -o json: the live stream again, byte for byte, without a cluster.
	r := runPlugin(t, cluster, "replay", file, "-o", "json", "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	if r.code != 0 {
		t.Fatalf("replay: exit %d; stderr %s", r.code, r.stderr)
	}
	replayed := splitLines(r.stdout)
	t.Logf("%d lines recorded and replayed", len(replayed))
	if diff := cmpSteps(stepsOf(t, liveLines), stepsOf(t, replayed)); diff != "" {
		t.Errorf("replayed (type, name, resourceVersion) differ from the live run:\n%s", diff)
	}
	if diff := cmpLines(liveLines, replayed); diff != "" {
		t.Errorf("replayed lines differ from the live run:\n%s", diff)
	}
	if !strings.HasPrefix(r.stderr, "--- kubectl informer: summary of "+file) {
		t.Errorf("stderr is not the summary: %q", r.stderr)
	}

	// Human replay: the lines a live human run printed.
	r = runPlugin(t, cluster, "replay", file, "--color", "never", "--no-summary")
	if r.code != 0 {
		t.Fatalf("human replay: exit %d; stderr %s", r.code, r.stderr)
	}
	got := splitLines(r.stdout)
	if !strings.HasPrefix(got[0], "# replay of "+file+": recorded ") {
		t.Errorf("first line %q", got[0])
	}
	var want, have []string
	for _, l := range humanLines {
		want = append(want, humanLine(l))
	}
	for _, l := range got[1:] {
		have = append(have, humanLine(l))
	}
	if diff := cmpLines(sortLists(want), sortLists(have)); diff != "" {
		t.Errorf("human replay differs from the live human run (time, queue depth and lifecycle details left out):\n%s", diff)
	}

	// A damaged line in the middle, and the filters.
	// The damaged one is a Deleted line: nothing after it needs it (an Updated line's managers and
	// changes need the line of its key before it).
	k := -1 // 0-based index into the file; line k+1
	for i, l := range fileLines {
		if strings.Contains(l, `"type":"Deleted"`) {
			k = i
			break
		}
	}
	if k < 2 {
		t.Fatalf("no Deleted line in the middle of the recording")
	}
	damaged := append(append(append([]string{}, fileLines[:k]...), `{"time":"2026-11-21T05:00:00Z","type":"Updated","name":`), fileLines[k+1:]...)
	damagedFile := filepath.Join(t.TempDir(), "damaged.ndjson")
	if err := os.WriteFile(damagedFile, []byte(strings.Join(damaged, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(t.TempDir(), "newer.ndjson")
	if err := os.WriteFile(newer, []byte(strings.Replace(string(raw), `"formatVersion":1`, `"formatVersion":3`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	liveWithout := append(append([]string{}, liveLines[:k-1]...), liveLines[k:]...)
	only := func(types ...string) []string {
		var out []string
		for _, l := range liveLines {
			for _, typ := range types {
				if strings.Contains(l, `"type":"`+typ+`"`) {
					out = append(out, l)
				}
			}
		}
		return out
	}
	objectsOf := func(name string) []string {
		var out []string
		for _, l := range liveLines {
			s := stepsOf(t, []string{l})[0]
			if (s.Type != "Added" && s.Type != "Updated" && s.Type != "Deleted" && s.Type != "Reconciled") || s.Name == name || strings.Contains(l, `"key":"`+ns+"/"+name+`"`) {
				out = append(out, l)
			}
		}
		return out
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string
		stderr     []string // each must appear
		stderrOnly bool     // stderr is exactly these lines
	}{
		{"damaged line", []string{damagedFile, "-o", "json", "--no-summary"}, 1, liveWithout,
			[]string{fmt.Sprintf("error: line %d: invalid JSON: unexpected end of JSON input", k+1),
				fmt.Sprintf("error: %s: 1 damaged line not replayed (line %d)", damagedFile, k+1)}, true},
		{"strict", []string{damagedFile, "-o", "json", "--strict"}, 1, liveLines[:k-1],
			[]string{fmt.Sprintf("error: %s: line %d: invalid JSON: unexpected end of JSON input", damagedFile, k+1)}, true},
		{"types", []string{file, "-o", "json", "--types", "Added,Deleted", "--no-summary"}, 0, only("Added", "Deleted"), nil, true},
		{"name", []string{file, "c1", "-o", "json", "--no-summary"}, 0, objectsOf("c1"), nil, true},
		{"other namespace", []string{file, "-n", "elsewhere", "-o", "json", "--types", "Added,Updated,Deleted", "--no-summary"}, 0, nil, nil, true},
		{"this namespace", []string{file, "-n", ns, "-o", "json", "--types", "Added,Deleted", "--no-summary"}, 0, only("Added", "Deleted"), nil, true},
		{"newer format", []string{newer}, 1, nil,
			[]string{"error: " + newer + ": line 1: the recording is in format version 3; this kubectl informer reads format version 1 (upgrade it to replay this recording)"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPlugin(t, cluster, append([]string{"replay"}, tt.args...)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", r.code, tt.code, r.stderr)
			}
			if diff := cmpLines(tt.stdout, splitLines(r.stdout)); diff != "" {
				t.Errorf("stdout:\n%s", diff)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if tt.stderrOnly && len(splitLines(r.stderr)) != len(tt.stderr) {
				t.Errorf("stderr has other lines:\n%s", r.stderr)
			}
		})
	}
}

func cmpSteps(want, got []step) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g step
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  %d: live %v, replay %v\n", i, w, g)
		}
	}
	return b.String()
}

func cmpLines(want, got []string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  line %d:\n    want %.300s\n    got  %.300s\n", i+1, w, g)
		}
	}
	return b.String()
}

// A recorded relist, fed to a controller's own informer through pkg/replay: the handler gets
// the recorded calls in order, the object deleted while the watch was down as a tombstone; and
// `replay` prints the relist as the live run did.
func TestReplayRelistIntoInformer(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	ctx := context.Background()
	c := testenv.StartT(t, testenv.Options{})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	createConfigMaps(t, c.Clientset, ns, "gone", "changed", "same")
	file := filepath.Join(t.TempDir(), "relist.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--record", file)
	p.AwaitJSON(t, await, is("Synced", ""))

	c.Relist(t, ctx, testenv.RelistChanges{Namespace: ns, Delete: "gone", Update: "changed", Create: "fresh"})
	p.AwaitJSON(t, 3*await, is("Relist", ""))
	// After the relist, one more watch event.
	createConfigMaps(t, c.Clientset, ns, "after")
	p.AwaitJSON(t, await, is("Added", "after"))
	p.Stop(t)

	rec, err := replay.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	want := rec.HandlerCalls(gvr)
	lw := rec.ListerWatcher(gvr)
	if lw.Relists() != 1 {
		t.Errorf("the recording holds %d relists, want 1", lw.Relists())
	}
	type call struct {
		Op, Name, RV string
		Tombstone    bool
	}
	calls := make(chan call, 100)
	name := func(o any) (string, string) {
		u := o.(*unstructured.Unstructured)
		return u.GetName(), u.GetResourceVersion()
	}
	informer := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { n, rv := name(o); calls <- call{"Added", n, rv, false} },
		UpdateFunc: func(_, o any) {
			n, rv := name(o)
			calls <- call{"Updated", n, rv, false}
		},
		DeleteFunc: func(o any) {
			if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
				n, rv := name(tomb.Obj)
				calls <- call{"Deleted", n, rv, true}
				return
			}
			n, rv := name(o)
			calls <- call{"Deleted", n, rv, false}
		},
	})
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	go informer.RunWithContext(ictx)
	var got, wantCalls []call
	for _, ev := range want {
		wantCalls = append(wantCalls, call{string(ev.Type), ev.Name, ev.ResourceVersion, ev.Obj.Tombstone})
		select {
		case c := <-calls:
			got = append(got, c)
		case <-time.After(await):
			t.Fatalf("handler calls so far %v, want %v", got, wantCalls)
		}
	}
	select {
	case <-lw.Done():
	case <-time.After(await):
		t.Fatal("the recording was not fully delivered")
	}
	if diff := cmp.Diff(wantCalls, got); diff != "" {
		t.Errorf("handler calls (-recorded +replayed):\n%s", diff)
	}
	var sawTombstone bool
	for _, c := range got {
		sawTombstone = sawTombstone || (c.Tombstone && c.Name == "gone")
	}
	if !sawTombstone {
		t.Errorf("no tombstone for gone: %v", got)
	}

	r := runPlugin(t, cluster, "replay", file, "--color", "never", "--no-summary")
	if r.code != 0 || !strings.Contains(r.stdout, ns+"/gone") || !strings.Contains(r.stdout, "[TOMBSTONE") || !strings.Contains(r.stdout, "RELIST from rv=") {
		t.Errorf("human replay of the relist: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
