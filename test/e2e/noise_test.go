package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// The tests in this file are about noise (issue: 5,370 updates of one object in 10 s buried
// everything): folded hot objects, ignored heartbeats, focus paths.

// humanArgs makes human output easy to parse.
var humanArgs = []string{"--color", "never", "--timestamps", "none", "--no-headers"}

// summaryCount reads a number the summary's noise line gives before what.
func summaryCount(t *testing.T, stderr, what string) int {
	t.Helper()
	m := regexp.MustCompile(`(\d+) ` + regexp.QuoteMeta(what)).FindStringSubmatch(stderr)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// withOperator returns the real control plane and a new namespace with the widget-operator
// running in it.
func withOperator(t *testing.T) (*testenv.Cluster, string) {
	t.Helper()
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	op, err := c.StartOperator(context.Background(), testenv.OperatorOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	return c, ns
}

var foldedLine = regexp.MustCompile(`^Folded +\S+ +(\S+) +rv=\S+  (\d+) more updates?`)

// humanCounts counts, in human lines, the Updated lines of an object and its Folded lines and
// the updates they stand for.
func humanCounts(lines []string, key string) (updated, foldedLines, foldedUpdates int) {
	for _, l := range lines {
		if strings.HasPrefix(l, "Updated ") && strings.Contains(l, "  "+key+"  ") {
			updated++
		}
		if m := foldedLine.FindStringSubmatch(l); m != nil && m[1] == key {
			foldedLines++
			n, _ := strconv.Atoi(m[2])
			foldedUpdates += n
		}
	}
	return
}

// The widget-operator's self-loop (a status write on every reconcile) in human output: after its
// HotLoop line, its updates are folded into about one line a second until its HotLoopEnded line,
// while the recording (the -o json contract) keeps every update; the summary's counts are the
// recording's; replaying the recording folds the same way.
func TestRealFoldSelfLoop(t *testing.T) {
	c, ns := withOperator(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "loop.ndjson")
	p := c.RunPlugin(t, ctx, append([]string{"watch", "widgets", "-n", ns, "--hot-loop-window", "3s", "--record", file}, humanArgs...)...)
	awaitLine(t, p, "cache synced")
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "loop", Bug: "status-loop"})
	key := ns + "/loop"
	awaitLine(t, p, "HOT LOOP")
	// The loop's pace is the operator's, slower on a loaded machine: await Folded lines until
	// they stand for 5 updates a line with one line to spare (the last, at the loop's end, may
	// fold fewer), rather than assume it after three of them.
	deadline := time.Now().Add(2 * await)
	for lines, updates := 0, 0; lines < 3 || updates < 5*(lines+1); {
		l := awaitLine(t, p, "Folded      widgets.example.com  "+key+"  ")
		if m := foldedLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			lines, updates = lines+1, updates+n
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loop was too slow to prove anything: %d updates in %d Folded lines after %s", updates, lines, 2*await)
		}
	}
	if _, err := c.Kubectl(ctx, "annotate", "widget/loop", "-n", ns, testenv.OperatorBugAnnotation+"-"); err != nil {
		t.Fatal(err)
	}
	awaitLine(t, p, "hot loop ended")
	stderr := p.Stop(t)
	lines := bytesToStrings(p.All())
	updated, foldedLines, foldedUpdates := humanCounts(lines, key)

	// The recording has every update; the human lines show some and fold the rest.
	var total int
	var first, last time.Time
	for _, m := range testenv.ReadNDJSON(t, file) {
		if m["type"] == "Updated" && m["name"] == "loop" {
			total++
			at, _ := time.Parse(time.RFC3339Nano, m["time"].(string))
			if first.IsZero() {
				first = at
			}
			last = at
		}
	}
	t.Logf("%d updates in %s: %d Updated lines, %d Folded lines for %d updates; summary: %s",
		total, last.Sub(first), updated, foldedLines, foldedUpdates, summaryLine(stderr, "hidden"))
	if updated+foldedUpdates != total {
		t.Errorf("%d updates shown + %d folded, want the recording's %d", updated, foldedUpdates, total)
	}
	// About one line a second: intervals by the events' own time, one more for the loop's end.
	if bound := int(last.Sub(first)/time.Second) + 2; foldedLines > bound {
		t.Errorf("%d Folded lines over %s of updates, want at most %d", foldedLines, last.Sub(first), bound)
	}
	if foldedUpdates < 5*foldedLines {
		t.Errorf("%d updates folded into %d lines: the loop was too slow to prove anything", foldedUpdates, foldedLines)
	}
	if n := summaryCount(t, stderr, "updates of objects in a hot loop folded into "+strconv.Itoa(foldedLines)+" Folded lines"); n != foldedUpdates {
		t.Errorf("summary says %d updates folded into N lines, want %d into %d:\n%s", n, foldedUpdates, foldedLines, stderr)
	}

	// Replayed, the recording folds the same way: every update shown or folded, about one line
	// a second; -o json and --fold=off keep every update.
	r := runPlugin(t, c, append([]string{"replay", file}, humanArgs...)...)
	if r.code != 0 {
		t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
	}
	ru, rl, rf := humanCounts(splitLines(r.stdout), key)
	if ru+rf != total || rl > int(last.Sub(first)/time.Second)+2 || rl == 0 {
		t.Errorf("replay: %d Updated lines + %d folded in %d lines, want %d in about one line a second", ru, rf, rl, total)
	}
	// --history --fold=off: the object's whole life, one row per event, with its diagnoses.
	h := runPlugin(t, c, "replay", file, "--history", key, "--no-summary", "--fold=off")
	rows := splitLines(strings.TrimSpace(h.stdout))
	var hotRows int
	for _, r := range rows {
		if strings.Contains(r, "HOT LOOP: ") || strings.Contains(r, "hot loop ended: ") {
			hotRows++
		}
	}
	// The replay header, the table's, the Added row, every update, the two diagnoses.
	if h.code != 0 || len(rows) != 2+1+total+2 || hotRows != 2 {
		t.Errorf("--history: exit %d, %d rows (%d diagnoses), want %d:\n%s", h.code, len(rows), hotRows, 2+1+total+2, h.stderr)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "Folded ") || strings.HasPrefix(l, "HotLoop") {
			t.Log(l)
		}
	}
	for i, r := range rows {
		if i < 6 || strings.Contains(r, "HotLoop") {
			t.Log(r)
		}
	}
	// Folded (the default): the self-loop's updates, alike (one writer, the same fields), are
	// a few rows that count them all.
	hf := runPlugin(t, c, "replay", file, "--history", key, "--no-summary")
	folded, updates := 0, 0
	for _, r := range splitLines(strings.TrimSpace(hf.stdout)) {
		f := strings.Fields(r) // TIME EVENT ...
		switch {
		case len(f) > 2 && f[1] == "Updated" && strings.HasPrefix(f[2], "×"):
			n, err := strconv.Atoi(strings.TrimPrefix(f[2], "×"))
			if err != nil {
				t.Fatalf("folded row %q", r)
			}
			folded++
			updates += n
		case len(f) > 1 && f[1] == "Updated":
			updates++
		}
	}
	t.Logf("--history, folded:\n%s", hf.stdout)
	if hf.code != 0 || updates != total || folded == 0 || len(splitLines(hf.stdout)) > len(rows)/4 {
		t.Errorf("--history (folded): exit %d, %d updates in %d folded rows, %d rows in all; want all %d updates in a quarter of %d rows:\n%s",
			hf.code, updates, folded, len(splitLines(hf.stdout)), total, len(rows), hf.stdout)
	}
	for _, args := range [][]string{{"-o", "json"}, append([]string{"--fold=off"}, humanArgs...)} {
		r := runPlugin(t, c, append([]string{"replay", file}, args...)...)
		n := strings.Count(r.stdout, `"type":"Updated"`)
		for _, l := range splitLines(r.stdout) {
			if strings.HasPrefix(l, "Updated ") {
				n++
			}
		}
		if n != total || strings.Contains(r.stdout, "Folded ") {
			t.Errorf("replay %v: %d updates, want all %d, none folded", args, n, total)
		}
	}
}

// kube-controller-manager's and kube-scheduler's leader election Leases, renewed every two
// seconds: hidden from human output by the default ignore set (and counted), shown with
// --ignore-path=-, marked "ignored" in -o json; the summary's count is the recording's.
func TestRealLeaseHeartbeatsIgnored(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "leases.ndjson")
	quiet := c.RunPlugin(t, ctx, append([]string{"watch", "leases", "-n", "kube-system", "--record", file}, humanArgs...)...)
	all := c.RunPlugin(t, ctx, append([]string{"watch", "leases", "-n", "kube-system", "--ignore-path=-", "--diff"}, humanArgs...)...)
	js := c.RunPlugin(t, ctx, "watch", "leases", "-n", "kube-system", "-o", "json", "--diff")
	awaitLine(t, quiet, "cache synced")
	for _, lease := range []string{"kube-controller-manager", "kube-scheduler"} {
		line := awaitLine(t, all, "kube-system/"+lease+"  ")
		for !strings.HasPrefix(line, "Updated ") {
			line = awaitLine(t, all, "kube-system/"+lease+"  ")
		}
		if !strings.Contains(line, "spec.renewTime: ") {
			t.Errorf("--ignore-path=-: a renewal without its change: %s", line)
		}
		js.AwaitJSON(t, await, func(m map[string]any) bool {
			return m["type"] == "Updated" && m["name"] == lease && m["ignored"] == true && findChange(m, "spec.renewTime")["ignored"] == true
		})
	}
	// The quiet run's own share: a renewal of each Lease in its recording (written a whole line
	// per event as it comes), not a guess that it has had one by the time the others did.
	for _, lease := range []string{"kube-controller-manager", "kube-scheduler"} {
		testenv.AwaitFileJSON(t, file, await, "a renewal of "+lease+"'s Lease in the quiet run's recording", func(m map[string]any) bool {
			return m["type"] == "Updated" && m["name"] == lease
		})
	}
	stderr := quiet.Stop(t)
	for _, l := range bytesToStrings(all.All()) {
		if strings.HasPrefix(l, "Updated ") {
			t.Log(l)
		}
	}
	for _, l := range bytesToStrings(quiet.All()) {
		if strings.HasPrefix(l, "Updated ") {
			t.Errorf("a heartbeat shown by default: %s", l)
		}
	}
	ignored, updates := 0, 0
	for _, m := range testenv.ReadNDJSON(t, file) {
		if m["type"] == "Updated" {
			updates++
			if m["ignored"] == true {
				ignored++
			}
		}
	}
	t.Logf("%d updates recorded, %d ignored; summary: %s", updates, ignored, summaryLine(stderr, "hidden"))
	if ignored == 0 || ignored != updates {
		t.Errorf("%d of %d recorded updates ignored, want every renewal", ignored, updates)
	}
	if n := summaryCount(t, stderr, "updates that changed only ignored paths"); n != ignored {
		t.Errorf("summary counts %d ignored updates, the recording %d:\n%s", n, ignored, stderr)
	}
}

// Two writers flipping a ReplicaSet's spec.replicas (the widget-operator against the deployment
// controller): --only-path spec.replicas shows only the flips; kube-controller-manager's status
// updates are out of focus, counted, and marked in the recording.
func TestRealOnlyPathFight(t *testing.T) {
	c, ns := withOperator(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "fight.ndjson")
	p := c.RunPlugin(t, ctx, append([]string{"watch", "replicasets", "-n", ns, "--only-path", "spec.replicas", "--diff", "--fold=off", "--record", file}, humanArgs...)...)
	awaitLine(t, p, "cache synced")
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fought", Size: 1, Bug: "fight"})
	awaitLine(t, p, "HOT LOOP")
	for range 4 {
		awaitLine(t, p, "spec.replicas: ")
	}
	// kube-controller-manager writes the ReplicaSet's status in its own time (issue #32: a cold
	// run stopped after four flips, before its first status write): await one out-of-focus
	// update in the recording, which is written a whole line per event as it comes.
	testenv.AwaitFileJSON(t, file, await, "an update out of focus (kube-controller-manager's status write)", func(m map[string]any) bool {
		return m["type"] == "Updated" && m["outOfFocus"] == true
	})
	stderr := p.Stop(t)
	shown := 0
	for _, l := range bytesToStrings(p.All()) {
		t.Log(l)
		if strings.HasPrefix(l, "Updated ") {
			shown++
			if !strings.Contains(l, "spec.replicas: ") {
				t.Errorf("an update out of focus shown: %s", l)
			}
		}
	}
	updates, unfocused := 0, 0
	for _, m := range testenv.ReadNDJSON(t, file) {
		if m["type"] != "Updated" {
			continue
		}
		updates++
		if m["outOfFocus"] == true {
			unfocused++
		}
	}
	t.Logf("%d updates: %d shown, %d out of focus; summary: %s", updates, shown, unfocused, summaryLine(stderr, "hidden"))
	if unfocused == 0 {
		t.Errorf("no update out of focus: kube-controller-manager's status updates should be")
	}
	if shown+unfocused != updates {
		t.Errorf("%d shown + %d out of focus, want the recording's %d updates", shown, unfocused, updates)
	}
	if n := summaryCount(t, stderr, "updates out of focus"); n != unfocused {
		t.Errorf("summary counts %d out of focus, the recording %d:\n%s", n, unfocused, stderr)
	}
}

// Bad paths and intervals fail the kubectl way: one line, exit 1, before any request.
func TestNoiseBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "cm", "--ignore-path", "status.conditions[*"}, `error: --ignore-path: invalid path "status.conditions[*": unclosed [ at offset 17` + "\n"},
		{[]string{"watch", "cm", "--only-path", "metadata.labels.app.kubernetes.io/name"}, `error: --only-path: invalid path "metadata.labels.app.kubernetes.io/name": field name "io/name" is not a plain name (quote a key with dots or slashes in brackets, as in metadata.labels["app.kubernetes.io/name"]) at offset 31` + "\n"},
		{[]string{"watch", "cm", "--fold", "sometimes"}, `error: --fold must be off (or 0) or an interval > 0 (e.g. 1s), got "sometimes"` + "\n"},
		{[]string{"replay", "x.ndjson", "--history", "a/b/c"}, `error: --history takes NAMESPACE/NAME, or NAME for a cluster-scoped object; got "a/b/c"` + "\n"},
		{[]string{"replay", "x.ndjson", "--history", "a/b", "-o", "json"}, "error: --history prints a table: it takes no -o but wide (got -o json)\n"},
	} {
		r := runPlugin(t, cluster, tt.args...)
		if r.code != 1 || r.stderr != tt.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}
