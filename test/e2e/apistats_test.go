package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// createWidgets makes n widgets in ns.
func createWidgets(t *testing.T, c *testenv.Cluster, ns string, n int) {
	t.Helper()
	for i := range n {
		c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: fmt.Sprintf("w%d", i), Size: int64(i)})
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
	return metricSum(t, raw, name, want)
}

// metricSum sums metric name of a Prometheus text page over the series whose labels include
// want (a histogram's _sum and _count are asked for by those names).
func metricSum(t *testing.T, raw []byte, name string, want map[string]string) float64 {
	t.Helper()
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
	// The reflector opens the watch while the list's objects are processed: before or after Synced.
	p.AwaitSeen(t, await, "the Watch line", is("Watch", ""))
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

// A priority level that admits nothing (no nominal seats, none borrowed, rejecting rather than
// queuing) and a flow schema putting one user's config map lists and watches in it: the plugin,
// run as that user, shows each 429 as it comes, with the flow schema and priority level by name.
func TestAPIStatsAPFRejection(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	user := "throttled-" + ns
	kc := userKubeconfig(t, cluster, user)
	grantReadConfigMaps(t, cluster, ns, user)
	// The names of flow schemas and priority levels are shown to users who may read them.
	rbac := cluster.Clientset.RbacV1()
	_, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"flowschemas", "prioritylevelconfigurations"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	name := "reject-" + ns
	rejectingLevel(t, cluster, name, user, ns)
	// A priority level without seats still admits a request when none of it is executing; so
	// two goroutines, as the same user, keep one request executing: a LIST at a
	// resourceVersion far ahead, which the watch cache holds about 3s waiting for it. Every
	// other request of the level is then rejected, at once (no queues).
	holdSeat(t, kc, ns)

	p := cluster.RunPluginAs(t, ctx, kc, "watch", "cm", "-n", ns, "-o", "json", "--timeout", "60s")
	th := p.AwaitJSON(t, await, is("Throttled", ""))
	wantField(t, th, "reason", "TooManyRequests")
	wantField(t, th, "flowSchema", name)
	wantField(t, th, "priorityLevel", name)
	if _, ok := th["retryAfterSeconds"].(float64); !ok {
		t.Errorf("Throttled line without retryAfterSeconds: %v", th)
	}
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	stats := p.AwaitJSON(t, await, is("ApiStats", ""))
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if got := numField(t, stats, "throttled"); got < 1 {
		t.Errorf("ApiStats throttled = %v, want >= 1", got)
	}
	if got := requests(stats, "WATCH", 429) + requests(stats, "LIST", 429); got != numField(t, stats, "throttled") {
		t.Errorf("ApiStats: %v requests answered 429, throttled = %v", got, stats["throttled"])
	}
	wantField(t, stats, "flowSchema", name)
	t.Logf("Throttled: %v\nstderr:\n%s", th, p.Stderr())
	if !contains(p.Stderr(), "429") {
		t.Errorf("summary does not count the 429s:\n%s", p.Stderr())
	}
}

// holdSeat keeps a request of the user of kubeconfig executing until the test ends, and returns
// once another request of that user was rejected with 429 (a seat is held).
func holdSeat(t *testing.T, kubeconfig, ns string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	rejected := make(chan struct{}, 1)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				err := cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").
					Param("resourceVersion", "999999999").Param("resourceVersionMatch", "NotOlderThan").
					MaxRetries(0).Do(ctx).Error()
				if apierrors.IsTooManyRequests(err) {
					select {
					case rejected <- struct{}{}:
					default:
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	select {
	case <-rejected:
	case <-time.After(await):
		t.Fatal("no request of the throttled user was ever rejected")
	}
}

// rejectingLevel makes a priority level that admits nothing (no nominal seats, none borrowed,
// rejecting rather than queuing) and a flow schema name putting user's config map lists and
// watches in ns in it, and waits until the API server applies them.
func rejectingLevel(t *testing.T, c *testenv.Cluster, name, user, ns string) {
	t.Helper()
	ctx := context.Background()
	fc := c.Clientset.FlowcontrolV1()
	zero := int32(0)
	_, err := fc.PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: &zero, LendablePercent: &zero, BorrowingLimitPercent: &zero,
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fc.FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: name},
			MatchingPrecedence:         100,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, Namespaces: []string{ns}}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fc.FlowSchemas().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = fc.PriorityLevelConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// The API server applies a new flow schema a moment after it is created.
	awaitFlowSchemaActive(t, c, name)
}

// awaitFlowSchemaActive waits for the API server's APF controller to take up flow schema name
// (its Dangling condition says whether its priority level was found).
func awaitFlowSchemaActive(t *testing.T, c *testenv.Cluster, name string) {
	t.Helper()
	deadline := time.Now().Add(await)
	for time.Now().Before(deadline) {
		fs, err := c.Clientset.FlowcontrolV1().FlowSchemas().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == flowcontrolv1.ConditionFalse {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("flow schema %s never became active (Dangling=False)", name)
}
