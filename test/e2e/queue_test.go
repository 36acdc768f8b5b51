package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func queueDepth(m map[string]any) int {
	q, _ := m["queue"].(map[string]any)
	return num(q["depth"])
}

// Many updates to one key while it waits give one reconcile: one 200ms worker, 50 updates
// over 5 objects.
func TestQueueCoalescing(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	names := []string{"a", "b", "c", "d", "e"}
	createConfigMaps(t, cluster.Clientset, ns, names...)
	file := filepath.Join(t.TempDir(), "coalescing.ndjson")
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--workers", "1", "--reconcile-time", "200ms", "--record", file)
	p.AwaitJSON(t, await, is("Synced", ""))
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	const updates = 50
	// One writer per object, all at once, so that every key waits while the 200ms worker is busy
	// (sent one after the other, how deep the queue got was decided by how fast each request came
	// back on a loaded machine).
	var wg sync.WaitGroup
	errs := make(chan error, updates)
	for k, name := range names {
		wg.Go(func() {
			for i := k; i < updates; i += len(names) {
				patch := fmt.Sprintf(`{"data":{"v":"update-%d"}}`, i)
				if _, err := cms.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	maxDepth := 0
	for range updates {
		u := p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Updated" && m["delta"] == "Updated" })
		maxDepth = max(maxDepth, queueDepth(u))
	}
	// The queue drains: a reconcile leaves it empty.
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Reconciled" && queueDepth(m) == 0 })
	var seenUpdate bool
	reconciles := 0
	// Every enqueued event is the trigger of exactly one reconcile: with the queue drained
	// (depth 0 after the last reconcile of one worker), the trigger counts add up to the
	// object lines.
	objects, triggers, coalesced, onlyUpdates := 0, 0, 0, 0
	for _, m := range p.JSON() {
		switch m["type"] {
		case "Added", "Updated", "Deleted":
			objects++
		case "Reconciled":
			n := num(m["triggerCount"])
			triggers += n
			ts, _ := m["triggers"].([]any)
			if n >= 2 {
				coalesced++
			}
			if len(ts) > 10 || len(ts) > n {
				t.Errorf("%d triggers listed of %d (cap 10): %v", len(ts), n, m)
			}
			all := n > 0 && len(ts) == n
			for _, x := range ts {
				tr, _ := x.(map[string]any)
				all = all && tr["type"] == "Updated"
			}
			if all {
				onlyUpdates++
			}
		}
		if m["type"] == "Updated" {
			seenUpdate = true
		}
		if m["type"] == "Reconciled" && seenUpdate {
			reconciles++
			wantField(t, m, "error", false)
		}
	}
	t.Logf("%d updates, %d reconciles after the first update, max depth %d", updates, reconciles, maxDepth)
	if reconciles >= updates {
		t.Errorf("%d reconciles for %d updates: keys did not coalesce", reconciles, updates)
	}
	if reconciles < len(names) {
		t.Errorf("%d reconciles, want at least one per object (%d)", reconciles, len(names))
	}
	if maxDepth < 3 {
		t.Errorf("queue depth reached %d, want >= 3", maxDepth)
	}
	t.Logf("%d object events, trigger counts add up to %d, %d reconciles with >= 2 triggers", objects, triggers, coalesced)
	if triggers != objects {
		t.Errorf("trigger counts add up to %d, want the %d object events enqueued", triggers, objects)
	}
	if coalesced == 0 {
		t.Error("no reconcile with 2 or more coalesced triggers")
	}

	// replay --predicate labels on the recording: the data patches change no label, so every
	// update is filtered, and the reconciles that ran only for updates would not have run.
	p.Stop(t)
	r := runPlugin(t, cluster, "replay", file, "-o", "json", "--predicate", "labels")
	if r.code != 0 {
		t.Fatalf("replay: exit %d; stderr %s", r.code, r.stderr)
	}
	filtered := 0
	for _, m := range testenv.DecodeNDJSON([]byte(r.stdout)) {
		if m["type"] == "Updated" {
			wantField(t, m, "filtered", "labels")
			filtered++
		}
	}
	want := fmt.Sprintf("predicates labels: %d of %d object events filtered; of %d recorded reconciles, %d ran only for filtered events", filtered, objects, p.Count(is("Reconciled", "")), onlyUpdates)
	if filtered != updates || !strings.Contains(r.stderr, want) {
		t.Errorf("replay --predicate labels: %d updates filtered (want %d); summary lacks %q:\n%s", filtered, updates, want, r.stderr)
	}
}

// A key whose reconcile always fails is retried with growing backoff, and retries are counted.
func TestQueueBackoff(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	createConfigMaps(t, cluster.Clientset, ns, "x")
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--fail-rate", "1")
	key := ns + "/x"
	for i := range 7 {
		r := p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Reconciled" && m["key"] == key })
		wantField(t, r, "error", true)
		if got := num(r["requeues"]); got != i {
			t.Errorf("reconcile %d: requeues = %d, want %d", i, got, i)
		}
		if i > 0 {
			// The default controller rate limiter waits at least 5ms * 2^(n-1) before retry n.
			minWait := float64(5*time.Millisecond<<(i-1)) / float64(time.Millisecond)
			if w := r["waitMs"].(float64); w < minWait {
				t.Errorf("retry %d waited %.3fms, want >= %.0fms (backoff)", i, w, minWait)
			}
		}
		if q := r["queue"].(map[string]any); i > 0 && num(q["retries"]) < i {
			t.Errorf("retry %d: queue retries = %v", i, q["retries"])
		}
	}
}
