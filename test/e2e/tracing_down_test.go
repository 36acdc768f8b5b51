package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// objectLines are a run's object lines, as what the informer received (type, delta, name,
// resourceVersions): what two runs that watched the same writes must agree on.
func objectLines(p *testenv.PluginRun) []string {
	var out []string
	for _, l := range p.All() {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && (m["type"] == "Added" || m["type"] == "Updated" || m["type"] == "Deleted") {
			out = append(out, fmt.Sprint(m["type"], " ", m["delta"], " ", m["name"], " ", m["resourceVersion"], " ", m["oldResourceVersion"]))
		}
	}
	return out
}

// awaitStderr waits for stderr to hold s.
func awaitStderr(t *testing.T, p *testenv.PluginRun, s string) {
	t.Helper()
	for deadline := time.Now().Add(await); !strings.Contains(p.Stderr(), s); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stderr never said %q:\n%s", s, p.Stderr())
		}
	}
}

// The collector killed in the middle of a run: the NDJSON output is the same as a run's without
// export, stderr says so once, and the exit summary counts the spans dropped.
func TestTracingCollectorKilled(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	j := testenv.StartJaeger(t)
	start := time.Now()
	with := c.RunPluginWith(t, ctx, otlpEnv(j), "watch", "configmaps", "-n", ns, "-o", "json", "--otlp")
	without := c.RunPlugin(t, ctx, "watch", "configmaps", "-n", ns, "-o", "json")
	for _, p := range []*testenv.PluginRun{with, without} {
		p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	}
	cms := c.Clientset.CoreV1().ConfigMaps(ns)
	write := func(round int) {
		for i := range 20 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"round": fmt.Sprint(round)}}
			var err error
			if round == 0 {
				_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			} else {
				_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	last := func(round int) func(map[string]any) bool {
		return func(m map[string]any) bool {
			o, _ := m["object"].(map[string]any)
			d, _ := o["data"].(map[string]any)
			return m["name"] == "cm-19" && d["round"] == fmt.Sprint(round)
		}
	}
	write(0)
	write(1)
	for _, p := range []*testenv.PluginRun{with, without} {
		p.AwaitJSON(t, await, last(1))
	}
	// Jaeger has the first rounds' spans (the run exports), then it is killed: its port refuses.
	for deadline := time.Now().Add(await); ; time.Sleep(200 * time.Millisecond) {
		n := 0
		for _, tr := range j.Traces(t, "kubectl-informer", start) {
			n += len(tr.Spans)
		}
		if n >= 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger holds %d spans of the first 40 lines", n)
		}
	}
	j.Stop()
	for round := 2; round <= 5; round++ {
		write(round)
	}
	for _, p := range []*testenv.PluginRun{with, without} {
		p.AwaitJSON(t, await, last(5))
	}
	awaitStderr(t, with, "exporting spans over OTLP failed")
	for _, p := range []*testenv.PluginRun{with, without} {
		if err := p.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code, err := p.Wait(); code != 0 {
			t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
		}
	}
	a, b := objectLines(with), objectLines(without)
	if len(a) < 120 || !slices.Equal(a, b) {
		t.Errorf("with --otlp %d object lines, without %d: want the same lines", len(a), len(b))
	}
	if n := strings.Count(with.Stderr(), "exporting spans over OTLP failed"); n != 1 {
		t.Errorf("said %d times, want once:\n%s", n, with.Stderr())
	}
	m := regexp.MustCompile(`otlp: (\d+) spans, (\d+) exported, (\d+) spans dropped`).FindStringSubmatch(with.Stderr())
	if m == nil || m[3] == "0" || m[2] == "0" {
		t.Fatalf("exit summary lacks the spans exported before the kill and dropped after it:\n%s", with.Stderr())
	}
	t.Logf("summary: %s", m[0])
}

// No token of OTEL_EXPORTER_OTLP_HEADERS reaches stderr, even at -v=10: the exporter's
// description names the headers, never their values.
func TestOTLPHeadersNeverLogged(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	j := testenv.StartJaeger(t)
	const token = "tok-3f9a-SECRET-b7"
	// A tenant header first: the plugin's log filter masks what follows "authorization=" on a
	// line anyway, so the token must also be where only the exporter's description keeps it out.
	env := append(otlpEnv(j), "OTEL_EXPORTER_OTLP_HEADERS=x-scope-orgid=tenant-"+token+",authorization=Bearer%20"+token)
	p := c.RunPluginWith(t, context.Background(), env, "watch", "configmaps", "-n", ns, "-o", "json", "--otlp", "-v=10", "--timeout", "3s")
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}
	if !strings.Contains(p.Stderr(), "names authorization,x-scope-orgid") {
		t.Fatalf("stderr at -v=10 does not describe the export:\n%s", p.Stderr())
	}
	if strings.Contains(p.Stderr(), token) || strings.Contains(p.Stderr(), "Bearer") {
		t.Errorf("a token of OTEL_EXPORTER_OTLP_HEADERS on stderr")
	}
}

// Two clusters exporting into one Jaeger (one over OTLP/HTTP, one over OTLP/gRPC): every span's process carries its cluster's
// k8s.cluster.uid (the kube-system namespace's uid) and k8s.cluster.name, and the objects of
// each cluster are under its own.
func TestTracingTwoClustersOneJaeger(t *testing.T) {
	ctx := context.Background()
	clusters := []*testenv.Cluster{realControlPlane(t), testenv.StartT(t, testenv.Options{})}
	j := testenv.StartJaeger(t)
	start := time.Now()
	want := map[string]string{} // a ConfigMap's name → its cluster's uid
	for i, c := range clusters {
		ks, err := c.Clientset.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns := newNamespace(t, c)
		name := fmt.Sprintf("cluster-%d", i)
		if _, err := c.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want[name] = string(ks.UID)
		// The second cluster exports over OTLP/gRPC, the first over OTLP/HTTP.
		env := otlpEnv(j)
		if i == 1 {
			env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.OTLPGRPC, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_INSECURE=true"}
		}
		p := c.RunPluginWith(t, ctx, env, "watch", "configmaps", "-n", ns, "-o", "json", "--otlp")
		p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
		if err := p.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code, err := p.Wait(); code != 0 || !strings.Contains(p.Stderr(), " 0 spans dropped") {
			t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
		}
	}
	if want["cluster-0"] == want["cluster-1"] {
		t.Fatalf("the two clusters have one kube-system uid %s", want["cluster-0"])
	}
	got := map[string]string{}
	for deadline := time.Now().Add(await); got["cluster-0"] == "" || got["cluster-1"] == ""; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger has the ConfigMaps of %v", got)
		}
		for _, tr := range j.Traces(t, "kubectl-informer", start) {
			for _, s := range tr.Spans {
				if s.OperationName != "ConfigMap.Added" {
					continue
				}
				uid, name := "", ""
				for _, tag := range tr.Processes[s.ProcessID].Tags {
					switch tag.Key {
					case "k8s.cluster.uid":
						uid = fmt.Sprint(tag.Value)
					case "k8s.cluster.name":
						name = fmt.Sprint(tag.Value)
					}
				}
				if name == "" {
					t.Errorf("span %s has no k8s.cluster.name", s.SpanID)
				}
				got[s.Tag("k8s.configmap.name")] = uid
			}
		}
	}
	for name, uid := range want {
		if got[name] != uid {
			t.Errorf("%s: exported under k8s.cluster.uid %q, want its cluster's %q", name, got[name], uid)
		}
	}
}

// A collector that accepts connections and never answers: every line still comes at once, the
// run ends when asked (the spans still queued given at most a few seconds), and the exit summary
// counts them dropped.
func TestTracingCollectorStalls(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range held {
			_ = conn.Close()
		}
	})
	p := c.RunPluginWith(t, ctx, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + l.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"},
		"watch", "configmaps", "-n", ns, "-o", "json", "--otlp")
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	cms := c.Clientset.CoreV1().ConfigMaps(ns)
	const n = 600
	for i := range n {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Added" && m["name"] == fmt.Sprintf("cm-%d", n-1) })
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}
	m := regexp.MustCompile(`otlp: (\d+) spans, 0 exported, (\d+) spans dropped`).FindStringSubmatch(p.Stderr())
	if m == nil || m[1] != m[2] {
		t.Fatalf("exit summary: want every span dropped:\n%s", p.Stderr())
	}
	if got := len(objectLines(p)); got < n {
		t.Errorf("%d object lines, want at least %d", got, n)
	}
}
