package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// createWidgets makes n widgets in ns.
func createWidgets(t *testing.T, c *testenv.Cluster, ns string, n int) {
	t.Helper()
	for i := range n {
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w%d", i)}, "spec": map[string]any{"size": int64(i)}}}
		if _, err := c.Dynamic.Resource(widgets).Namespace(ns).Create(context.Background(), w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// serverMetric sums a kube-apiserver metric over the series whose labels include want (a
// histogram's _sum and _count are asked for by those names).
func serverMetric(t *testing.T, c *testenv.Cluster, name string, want map[string]string) float64 {
	t.Helper()
	raw, err := c.Clientset.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	family, field := name, ""
	for _, suffix := range []string{"_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] != nil {
			family, field = base, suffix
		}
	}
	total := 0.0
	mf := families[family]
	if mf == nil {
		return 0
	}
next:
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case field == "_sum":
			total += m.GetHistogram().GetSampleSum()
		case field == "_count":
			total += float64(m.GetHistogram().GetSampleCount())
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			total += m.GetGauge().GetValue()
		}
	}
	return total
}

// awaitServerMetric waits until the kube-apiserver's metric reaches want (a request is counted
// when it ends: a watch, once the plugin closed it).
func awaitServerMetric(t *testing.T, c *testenv.Cluster, name string, labels map[string]string, want float64) {
	t.Helper()
	deadline := time.Now().Add(await)
	var got float64
	for time.Now().Before(deadline) {
		if got = serverMetric(t, c, name, labels); got == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("kube-apiserver %s%v = %v, want %v", name, labels, got, want)
}

func numField(t *testing.T, m map[string]any, field string) float64 {
	t.Helper()
	f, ok := m[field].(float64)
	if !ok {
		t.Fatalf("%s line: %s = %#v, want a number (line: %v)", m["type"], field, m[field], m)
	}
	return f
}

// requests sums an ApiStats line's requests of verb and code (code < 0: any).
func requests(m map[string]any, verb string, code int) float64 {
	total := 0.0
	rs, _ := m["requests"].([]any)
	for _, r := range rs {
		r := r.(map[string]any)
		if r["verb"] == verb && (code < 0 || r["code"] == float64(code)) {
			total += r["count"].(float64)
		}
	}
	return total
}

// A paginated LIST (--list-mode list --chunk-size 2): the List line, the ApiStats line at exit
// and the kube-apiserver's own request and response-size metrics agree on requests, pages,
// objects and bytes.
func TestAPIStatsPaginatedList(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	createWidgets(t, cluster, ns, 7)
	listLabels := map[string]string{"verb": "LIST", "resource": "widgets", "scope": "namespace"}
	lists0 := serverMetric(t, cluster, "apiserver_request_total", listLabels)
	bytes0 := serverMetric(t, cluster, "apiserver_response_sizes_sum", listLabels)

	p := cluster.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--list-mode", "list", "--chunk-size", "2", "--timeout", "60s")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	wantField(t, info, "listMode", "list")
	wantField(t, info, "pageSize", 2.0)
	list := p.AwaitJSON(t, await, is("List", ""))
	wantField(t, list, "items", 7.0)
	wantField(t, list, "pages", 4.0) // 2+2+2+1
	synced := p.AwaitJSON(t, await, is("Synced", ""))
	wantField(t, synced, "listMode", "list")
	wantField(t, synced, "fellBack", false)
	p.AwaitJSON(t, await, is("Watch", ""))
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	stats := p.AwaitJSON(t, await, is("ApiStats", ""))
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	wantField(t, stats, "final", true)
	wantField(t, stats, "lists", 1.0)
	wantField(t, stats, "streamingLists", 0.0)
	wantField(t, stats, "listPages", 4.0)
	wantField(t, stats, "lastListPages", 4.0)
	wantField(t, stats, "throttled", 0.0)
	if got := requests(stats, "LIST", 200); got != 4 {
		t.Errorf("ApiStats LIST 200 requests = %v, want 4 (one per page)", got)
	}
	if got := requests(stats, "WATCH", 200); got < 1 {
		t.Errorf("ApiStats WATCH 200 requests = %v, want >= 1", got)
	}
	if got := numField(t, stats, "objects"); got < 7 {
		t.Errorf("ApiStats objects = %v, want >= 7", got)
	}
	// The server counted the same requests, and sent the same bytes.
	awaitServerMetric(t, cluster, "apiserver_request_total", listLabels, lists0+4)
	sent := serverMetric(t, cluster, "apiserver_response_sizes_sum", listLabels) - bytes0
	// The pages are small: the server sends them uncompressed, and the sizes it counted are
	// exactly the bytes received.
	wantField(t, stats, "compressedResponses", 0.0)
	if got := numField(t, stats, "bytesReceived"); sent == 0 || got != sent {
		t.Errorf("ApiStats bytesReceived = %v; the server's LIST response sizes grew by %v", got, sent)
	}
	t.Logf("ApiStats: %v; server LIST bytes %v", stats, sent)
	if !contains(p.Stderr(), "api widgets.example.com: requests LIST 200×4") {
		t.Errorf("summary lacks the api line:\n%s", p.Stderr())
	}
}

// A streaming list (--list-mode watchlist): one WATCH, no LIST, the list counted as streaming,
// its objects and the initial-events-end bookmark counted; the server saw the same WATCH.
func TestAPIStatsStreamingList(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	createWidgets(t, cluster, ns, 5)
	watchLabels := map[string]string{"verb": "WATCH", "resource": "widgets", "scope": "namespace"}
	listLabels := map[string]string{"verb": "LIST", "resource": "widgets", "scope": "namespace"}
	watches0 := serverMetric(t, cluster, "apiserver_request_total", watchLabels)
	lists0 := serverMetric(t, cluster, "apiserver_request_total", listLabels)

	t.Setenv("KUBE_FEATURE_WatchListClient", "false") // --list-mode watchlist wins over it
	p := cluster.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--list-mode", "watchlist", "--timeout", "60s")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	wantField(t, info, "watchList", true)
	w := p.AwaitJSON(t, await, is("Watch", ""))
	wantField(t, w, "sendInitialEvents", true)
	synced := p.AwaitJSON(t, await, is("Synced", ""))
	wantField(t, synced, "listMode", "watchlist")
	wantField(t, synced, "items", 5.0)
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	stats := p.AwaitJSON(t, await, is("ApiStats", ""))
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	wantField(t, stats, "lists", 1.0)
	wantField(t, stats, "streamingLists", 1.0)
	wantField(t, stats, "listPages", 0.0)
	wantField(t, stats, "watchStreams", 1.0)
	wantField(t, stats, "watchReconnects", 0.0)
	if got := requests(stats, "LIST", -1); got != 0 {
		t.Errorf("ApiStats LIST requests = %v, want 0", got)
	}
	if got := requests(stats, "WATCH", 200); got != 1 {
		t.Errorf("ApiStats WATCH 200 requests = %v, want 1", got)
	}
	if got := numField(t, stats, "objects"); got != 5 {
		t.Errorf("ApiStats objects = %v, want 5", got)
	}
	if got := numField(t, stats, "bookmarks"); got < 1 {
		t.Errorf("ApiStats bookmarks = %v, want >= 1 (the initial-events-end bookmark)", got)
	}
	if got := numField(t, stats, "bytesDecoded"); got <= 0 {
		t.Errorf("ApiStats bytesDecoded = %v, want > 0", got)
	}
	// The server recorded one WATCH of widgets (when it ended) and no LIST.
	awaitServerMetric(t, cluster, "apiserver_request_total", watchLabels, watches0+1)
	if got := serverMetric(t, cluster, "apiserver_request_total", listLabels); got != lists0 {
		t.Errorf("kube-apiserver LIST widgets requests grew by %v, want 0", got-lists0)
	}
	t.Logf("ApiStats: %v", stats)
}
