package cmd

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func TestNoiseFlagsValidate(t *testing.T) {
	tests := []struct {
		name     string
		ignore   []string
		only     []string
		fold     string
		wantFold time.Duration
		wantErr  string
	}{
		{name: "defaults", fold: "1s", wantFold: time.Second},
		{name: "off", fold: "off"},
		{name: "interval", fold: "5s", wantFold: 5 * time.Second},
		{name: "bad interval", fold: "soon", wantErr: `--fold must be off (or 0) or an interval > 0 (e.g. 1s), got "soon"`},
		{name: "negative interval", fold: "-1s", wantErr: `--fold must be off (or 0) or an interval > 0`},
		{name: "paths", ignore: []string{"-", `metadata.annotations["a/b"]`}, only: []string{"spec.replicas"}, fold: "1s", wantFold: time.Second},
		{name: "bad ignore path", ignore: []string{"status.conditions[*"}, fold: "1s", wantErr: `--ignore-path: invalid path "status.conditions[*": unclosed [ at offset 17`},
		{name: "bad only path", only: []string{"spec["}, fold: "1s", wantErr: `--only-path: invalid path "spec[": unclosed [`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &NoiseFlags{IgnorePaths: tt.ignore, OnlyPaths: tt.only, Fold: tt.fold}
			err := n.Validate()
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			case n.fold != tt.wantFold:
				t.Errorf("fold %s, want %s", n.fold, tt.wantFold)
			}
		})
	}
}

// A recording of a hot loop replays folded in human output (by the recorded time, one Folded
// line per second), whole with --fold=off and in -o json; --history prints the object's life with
// its diagnosis; --only-path hides what it does not name, and the summary counts it.
func TestReplayNoiseAndHistory(t *testing.T) {
	at := func(ms int) time.Time { return rt0.Add(time.Duration(ms) * time.Millisecond) }
	prev := cmObj("demo", "busy", "100", "web", "0")
	events := []watch.Event{{Type: watch.Added, Time: at(0), Resource: cmRes, Namespace: "demo", Name: "busy", ResourceVersion: "100", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: prev}}}
	hot := analysis.New(analysis.Config{HotLoopUpdates: 3, HotLoopWindow: time.Minute})
	const n = 300 // every 10ms: 3s of updates
	for i := 1; i <= n; i++ {
		cur := cmObj("demo", "busy", fmt.Sprint(100+i), "web", fmt.Sprint(i))
		if i%100 == 0 { // a label change now and then
			cur = cmObj("demo", "busy", fmt.Sprint(100+i), "api", fmt.Sprint(i))
		}
		ev := watch.UpdateOf(cmRes, prev, cur, at(i*10))
		events = hot.Analyze(events, &ev)
		prev = cur
	}
	path, _ := record(t, events, false)
	run := func(args ...string) (string, string) {
		t.Helper()
		out, errb, err := runReplay(t, context.Background(), "", append([]string{path, "--timestamps", "none", "--no-headers"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out, errb
	}
	count := func(out, prefix string) int {
		c := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, prefix) {
				c++
			}
		}
		return c
	}
	out, summary := run()
	folded := 0
	for _, m := range regexp.MustCompile(`(?m)^Folded .* (\d+) more updates`).FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[1])
		folded += k
	}
	shown, lines := count(out, "Updated "), count(out, "Folded ")
	if shown+folded != n || lines < 2 || lines > 4 {
		t.Errorf("%d Updated lines and %d folded in %d lines, want %d in about one a second:\n%s", shown, folded, lines, n, out)
	}
	if want := fmt.Sprintf("hidden: %d updates of objects in a hot loop folded into %d Folded lines", folded, lines); !strings.Contains(summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, summary)
	}
	if out, _ := run("--fold=off"); count(out, "Updated ") != n || count(out, "Folded ") != 0 {
		t.Errorf("--fold=off: %d Updated lines, want %d", count(out, "Updated "), n)
	}
	if out, _ := run("-o", "json"); strings.Count(out, `"type":"Updated"`) != n || strings.Contains(out, "Folded") {
		t.Errorf("-o json: %d Updated lines, want %d", strings.Count(out, `"type":"Updated"`), n)
	}
	out, summary = run("--only-path", "metadata.labels", "--fold=off")
	if count(out, "Updated ") != 5 || !strings.Contains(summary, fmt.Sprintf("%d updates out of focus", n-5)) {
		t.Errorf("--only-path metadata.labels: %d Updated lines, want 5 (the label flips and back); summary:\n%s", count(out, "Updated "), summary)
	}
	out, _ = run("--history", "demo/busy", "--ignore-path", "data", "--fold=off")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 1+1+n+1 || !strings.HasPrefix(rows[0], "EVENT") {
		t.Fatalf("--history --fold=off: %d rows, want a header and %d:\n%s", len(rows), n+2, out)
	}
	for _, want := range []string{"Added ", "100→101", `(+1 ignored)`, `metadata.labels.app: "web" → "api"; (+1 ignored)`, "HotLoop ", "HOT LOOP: 4 updates in 1m0s"} {
		if !strings.Contains(out, want) {
			t.Errorf("--history lacks %q:\n%s", want, strings.Join(rows[:8], "\n"))
		}
	}
	// Folded (the default): in the hot loop, a run of alike updates (same writers, same fields)
	// is one row; the label's flip to api and back breaks the runs.
	out, _ = run("--history", "demo/busy", "--ignore-path", "data")
	want := `EVENT                   RV       STATE  BY  CHANGES
Added                   100                 
Updated                 100→101             (+1 ignored)
Updated                 101→102             (+1 ignored)
Updated                 102→103             (+1 ignored)
Updated                 103→104             (+1 ignored)
HotLoop                                     HOT LOOP: 4 updates in 1m0s; flipping: data.v
Updated ×95 over 940ms  104→199             (+1 ignored)
Updated ×2 over 10ms    199→201             metadata.labels.app: "web" → … → "web"; (+1 ignored)
Updated ×98 over 970ms  201→299             (+1 ignored)
Updated ×2 over 10ms    299→301             metadata.labels.app: "web" → … → "web"; (+1 ignored)
Updated ×98 over 970ms  301→399             (+1 ignored)
Updated                 399→400             metadata.labels.app: "web" → "api"; (+1 ignored)`
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		got = append(got, strings.TrimRight(l, " "))
	}
	var wantRows []string
	for _, l := range strings.Split(want, "\n") {
		wantRows = append(wantRows, strings.TrimRight(l, " "))
	}
	if diff := cmp.Diff(wantRows, got); diff != "" {
		t.Errorf("--history, folded (-want +got):\n%s", diff)
	}
}
