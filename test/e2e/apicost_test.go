package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestMeasureAPICost measures what one informer costs the API server (docs/performance.md):
// the initial list of 500 widgets, 20s at rest, then 20s of 10 updates a second, with streaming
// lists on and off. A measurement, not a check: it runs only with KUBECTL_INFORMER_MEASURE=1.
func TestMeasureAPICost(t *testing.T) {
	if os.Getenv("KUBECTL_INFORMER_MEASURE") == "" {
		t.Skip("a measurement for docs/performance.md; set KUBECTL_INFORMER_MEASURE=1")
	}
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	const n = 500
	createWidgets(t, cluster, ns, n)
	rows := []string{"| list mode | initial list: requests, bytes received (decoded) | bytes per object | at rest, per minute | under churn (10 updates/s), per minute |", "|---|---|---|---|---|"}
	for round, mode := range []string{"watchlist", "list"} {
		p := cluster.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--list-mode", mode, "--api-stats", "20s", "--timeout", "70s")
		p.AwaitJSON(t, await, is("Synced", ""))
		start := p.AwaitJSON(t, await, is("ApiStats", "")) // 20s: the initial list, then rest
		rest := p.AwaitJSON(t, await, is("ApiStats", ""))  // 40s: at rest
		stop := make(chan struct{})
		go func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				data := fmt.Sprintf(`{"spec":{"size":%d}}`, (round+1)*100000+i) // never the value it has
				if _, err := cluster.Dynamic.Resource(widgets).Namespace(ns).Patch(ctx, fmt.Sprintf("w%d", i%n), types.MergePatchType, []byte(data), metav1.PatchOptions{}); err != nil {
					t.Errorf("patch: %v", err)
					return
				}
			}
		}()
		churn := p.AwaitJSON(t, await, is("ApiStats", "")) // 60s: 20s of churn
		close(stop)
		f := func(m map[string]any, k string) float64 { return m[k].(float64) }
		reqs := requests(start, "LIST", -1) + requests(start, "WATCH", -1)
		perMin := func(a, b map[string]any) string {
			return fmt.Sprintf("%.0f B, %.0f objects, %.0f bookmarks", 3*(f(b, "bytesReceived")-f(a, "bytesReceived")),
				3*(f(b, "objects")-f(a, "objects")), 3*(f(b, "bookmarks")-f(a, "bookmarks")))
		}
		rows = append(rows, fmt.Sprintf("| %s | %.0f requests, %.0f B (%.0f B) | %.0f B | %s | %s |", mode, reqs,
			f(start, "bytesReceived"), f(start, "bytesDecoded"), f(start, "bytesDecoded")/n, perMin(start, rest), perMin(rest, churn)))
		t.Logf("%s: %v\n%v\n%v", mode, start, rest, churn)
		if _, err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rows {
		t.Log(r)
	}
}
