package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A --field-selector field the server does not support is a 400: one line naming it and exit 1,
// as kubectl get does, not a list retried until --timeout and exit 0 (issue #33).
func TestFieldSelectorUnsupported(t *testing.T) {
	ns := newNamespace(t, cluster)
	r := runPlugin(t, cluster, "watch", "pods", "-n", ns, "--field-selector", "foo=bar", "--timeout", "40s")
	lines := splitLines(strings.TrimSpace(r.stderr))
	if r.code != 1 || len(lines) != 1 || !strings.Contains(r.stderr, "BadRequest") || !strings.Contains(r.stderr, "foo") {
		t.Errorf("exit %d, stderr (%d lines):\n%s\nwant exit 1 and one line naming the bad request", r.code, len(lines), r.stderr)
	}
	t.Log(r.stderr)
}

// replay --hot-loop-window detects hot loops again and ends them by its own window: the
// recorded HotLoopEnded lines (of the recording's window) are not printed (issue #33). The loop
// is recorded with a 10 s window; an object created 3 s after the loop stopped gives the replay
// a line past its 1 s window.
func TestReplayRedetectEndsLoops(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	for _, tc := range testControllers {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a controller and a namespace of its own
			c, ns := tc.start(t)
			ctx := context.Background()
			file := filepath.Join(t.TempDir(), "loop.ndjson")
			p := c.RunPlugin(t, ctx, "watch", tc.resource, "-n", ns, "--hot-loop-window", "10s", "--record", file, "-o", "json")
			p.AwaitJSON(t, await, is("Synced", ""))
			tc.create(t, c, ns, "loop", "status-loop", 1)
			p.AwaitJSON(t, await, is("HotLoop", "loop"))
			if _, err := c.Kubectl(ctx, "annotate", tc.kind+"/loop", "-n", ns, tc.bugAnnotation+"-"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second) // a gap longer than the replay's window
			tc.create(t, c, ns, "other", "", 1)
			recordedEnd := awaitSeen(t, p, 2*await, "the recorded HotLoopEnded", is("HotLoopEnded", "loop"))
			p.Stop(t)

			// A low threshold: the loop's pace on a busy machine decides how many updates fall
			// in 1 s; the point is which window ends it.
			r := runPlugin(t, c, "replay", file, "--hot-loop-window", "1s", "--hot-loop-updates", "3", "-o", "json", "--no-summary")
			if r.code != 0 {
				t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
			}
			var ends []map[string]any
			for _, l := range splitLines(r.stdout) {
				var m map[string]any
				if jsonLine([]byte(l), &m) == nil && m["type"] == "HotLoopEnded" && m["name"] == "loop" {
					ends = append(ends, m)
				}
			}
			if len(ends) == 0 {
				t.Fatalf("replay with a 1s window ended no hot loop of loop")
			}
			for _, e := range ends {
				if e["time"] == recordedEnd["time"] {
					t.Errorf("the recorded HotLoopEnded (10 s window) printed by a replay with a 1 s window: %v", e)
				}
			}
		})
	}
}
