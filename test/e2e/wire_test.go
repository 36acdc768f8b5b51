package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// wireLine is what the wire tests read from an -o json line.
type wireLine struct {
	Type            string            `json:"type"`
	Resource        string            `json:"resource"`
	Namespace       string            `json:"namespace"`
	Name            string            `json:"name"`
	ResourceVersion string            `json:"resourceVersion"`
	Object          json.RawMessage   `json:"object"`
	Wires           map[string]string `json:"wires"`
	Final           bool              `json:"final"`
	BytesDecoded    int64             `json:"bytesDecoded"`
	Objects         int64             `json:"objects"`
}

// wireRun is the lines of a finished run, parsed.
func wireRun(t *testing.T, p *testenv.PluginRun) []wireLine {
	t.Helper()
	var out []wireLine
	for _, l := range p.All() {
		var w wireLine
		if err := json.Unmarshal(l, &w); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		out = append(out, w)
	}
	return out
}

// Built-in resources come over protobuf by default and over JSON with --wire json, and -o json
// prints the same object bytes either way: pods, ReplicaSets and a Deployment made by the real
// control plane, from the initial list and from the watch.
func TestBuiltinsOverProtobufSameJSON(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	if _, err := c.Kubectl(ctx, "create", "deployment", "web", "-n", ns, "--image=example.com/web:1", "--replicas=2"); err != nil {
		t.Fatal(err)
	}
	awaitRunningPods(t, c, ns, 2)

	args := []string{"watch", "deployments,replicasets,pods", "-n", ns, "-o", "json"}
	pb := c.RunPlugin(t, ctx, append(args, "--wire", "auto")...)
	js := c.RunPlugin(t, ctx, append(args, "--wire", "json")...)
	for _, r := range []struct {
		p    *testenv.PluginRun
		wire string
	}{{pb, "protobuf"}, {js, "json"}} {
		info := r.p.AwaitJSON(t, await, is("Informer", ""))
		wires, _ := info["wires"].(map[string]any)
		for _, res := range []string{"deployments.apps", "replicasets.apps", "pods"} {
			if wires[res] != r.wire {
				t.Errorf("Informer line wires = %v, want %s for %s", wires, r.wire, res)
			}
		}
		for range 3 {
			r.p.AwaitJSON(t, await, is("Synced", ""))
		}
	}
	// Changes that come through the watch: a third pod, scheduled and run.
	if _, err := c.Kubectl(ctx, "scale", "deployment", "web", "-n", ns, "--replicas=3"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*testenv.PluginRun{pb, js} {
		awaitSeen(t, p, 2*await, "the Deployment with 3 available replicas", func(m map[string]any) bool {
			a, _ := number(m, "status", "availableReplicas")
			return m["type"] == "Updated" && m["resource"] == "deployments" && a == 3
		})
		p.Stop(t)
	}

	type key struct{ resource, name, rv string }
	objects := func(lines []wireLine) map[key]wireLine {
		m := map[key]wireLine{}
		for _, l := range lines {
			if len(l.Object) > 0 && l.ResourceVersion != "" {
				m[key{l.Resource, l.Name, l.ResourceVersion}] = l
			}
		}
		return m
	}
	pbObjs, jsObjs := objects(wireRun(t, pb)), objects(wireRun(t, js))
	compared := map[string]bool{} // resource/name
	watched := 0
	for k, p := range pbObjs {
		j, ok := jsObjs[k]
		if !ok {
			continue
		}
		compared[k.resource+"/"+k.name] = true
		if p.Type == "Updated" {
			watched++
		}
		if string(p.Object) != string(j.Object) {
			t.Errorf("%s %s at resourceVersion %s: -o json objects differ between the wires\nprotobuf: %s\njson:     %s", k.resource, k.name, k.rv, p.Object, j.Object)
		}
	}
	// Every object of the namespace was compared, and updates from the watch among them.
	for _, want := range []string{"deployments/web"} {
		if !compared[want] {
			t.Errorf("%s not seen at the same resourceVersion on both wires (compared %v)", want, compared)
		}
	}
	pods := 0
	for k := range compared {
		if strings.HasPrefix(k, "pods/") {
			pods++
		}
	}
	if pods < 3 || watched == 0 {
		t.Errorf("compared %d pods (want 3) and %d watched updates (want some): %v", pods, watched, compared)
	}

	// Protobuf on the wire: the same pods cost fewer decoded bytes each than in JSON.
	perObject := func(lines []wireLine) float64 {
		for _, l := range lines {
			if l.Type == "ApiStats" && l.Final && l.Resource == "pods" && l.Objects > 0 {
				return float64(l.BytesDecoded) / float64(l.Objects)
			}
		}
		t.Fatal("no final ApiStats line for pods")
		return 0
	}
	if p, j := perObject(wireRun(t, pb)), perObject(wireRun(t, js)); p >= j {
		t.Errorf("pods: %.0f bytes decoded per object with --wire auto, %.0f with --wire json: want fewer (protobuf)", p, j)
	}
}

// awaitRunningPods waits until n pods of ns run.
func awaitRunningPods(t *testing.T, c *testenv.Cluster, ns string, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 2*await, true, func(ctx context.Context) (bool, error) {
		l, err := c.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d running pods in %s: %v", n, ns, err)
	}
}

// The header says which wire each resource uses: protobuf for a built-in, JSON for a custom
// resource, everything JSON with --wire json; --wire takes auto or json only.
func TestWireInHeader(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	ns := newNamespace(t, cluster)
	header := func(args ...string) string {
		r := runPlugin(t, cluster, append([]string{"watch", "pods,widgets", "-n", ns, "--timeout", "2s"}, args...)...)
		if r.code != 0 {
			t.Fatalf("kubectl informer %v: exit %d\n%s", args, r.code, r.stderr)
		}
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, "# watching ") {
				return l
			}
		}
		t.Fatalf("%v: no header line in\n%s", args, r.stdout)
		return ""
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--wire", "auto"}, ", wire protobuf for pods, json for widgets.example.com"},
		{[]string{"--wire", "json"}, ", wire json,"},
	}
	for _, tt := range tests {
		if got := header(tt.args...); !strings.Contains(got, tt.want) {
			t.Errorf("%v: header %q, want it to contain %q", tt.args, got, tt.want)
		}
	}
	r := runPlugin(t, cluster, "watch", "pods", "-n", ns, "--wire", "protobuf")
	if want := `--wire must be one of auto, json; got "protobuf"`; r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("--wire protobuf: exit %d, stderr %q, want an error saying %q", r.code, r.stderr, want)
	}

}
