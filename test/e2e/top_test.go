package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// topBatch gathers one interval's Top lines of `top -o json`; a TopWriter line closes it.
type topBatch struct {
	time string
	tops []map[string]any
}

// awaitTopBatch returns the first interval whose Top lines satisfy ok.
func awaitTopBatch(t *testing.T, p interface {
	AwaitJSON(testing.TB, time.Duration, func(map[string]any) bool) map[string]any
}, timeout time.Duration, ok func([]map[string]any) bool) []map[string]any {
	t.Helper()
	var cur topBatch
	var found, last []map[string]any
	// A batch that never matched is shown as a user would read it, first rows first.
	t.Cleanup(func() {
		if !t.Failed() || found != nil {
			return
		}
		for i, m := range last {
			if i == 8 {
				break
			}
			t.Logf("last batch: %2.0f %s %s/%s writes=%v heartbeats=%v managers=%v loop=%v suggestion=%v", m["rank"], m["resource"], m["namespace"], m["name"], m["writes"], m["heartbeats"], topManagers(m), m["loop"], m["suggestion"])
		}
	})
	p.AwaitJSON(t, timeout, func(m map[string]any) bool {
		switch m["type"] {
		case "Top":
			if m["time"] != cur.time {
				cur = topBatch{time: m["time"].(string)}
			}
			cur.tops = append(cur.tops, m)
		case "TopWriter":
			if len(cur.tops) > 0 {
				last = cur.tops
			}
			if len(cur.tops) > 0 && ok(cur.tops) {
				found = cur.tops
				return true
			}
			cur = topBatch{}
		}
		return false
	})
	return found
}

func topManagers(m map[string]any) []string {
	var out []string
	ms, _ := m["managers"].([]any)
	for _, x := range ms {
		out = append(out, x.(map[string]any)["name"].(string))
	}
	return out
}

func topNum(m map[string]any, k string) int {
	f, _ := m[k].(float64)
	return int(f)
}

// The widget-operator's fight (a ReplicaSet's spec.replicas against kube-controller-manager) and
// its self-loop (a status write on every reconcile) beside the control plane's Leases and the
// kwok nodes' heartbeats: with nothing named, top ranks both loops above every object that only
// heartbeats, names both fighters, diagnoses fight and self with their fix, and counts the
// heartbeats apart; at --duration's end the final ranking says how to drill in, and the summary
// what the scan cost.
func TestRealTopLoopsAboveHeartbeats(t *testing.T) {
	c, ns := withOperator(t)
	ctx := context.Background()
	// The self-loop runs before top starts, so top first sees it in the middle of its loop (as
	// on the CI run where a slow sync found it on writes that named nobody, and said busy).
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "loop", Bug: "status-loop"})
	p := c.RunPlugin(t, ctx, "top", "-o", "json", "--interval", "1s", "--window", "30s", "--limit", "0", "--duration", "3m")
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fought", Size: 1, Bug: "fight"})
	start := time.Now()

	isFight := func(m map[string]any) bool {
		names := topManagers(m)
		return m["resource"] == "replicasets.apps" && m["namespace"] == ns && m["loop"] == "fight" &&
			slices.Contains(names, "widget-operator") && slices.Contains(names, "kube-controller-manager") &&
			strings.Contains(m["suggestion"].(string), "let only one of them write")
	}
	isSelf := func(m map[string]any) bool {
		return m["resource"] == "widgets.example.com" && m["namespace"] == ns && m["name"] == "loop" && m["loop"] == "self" &&
			strings.Contains(m["suggestion"].(string), "widget-operator re-triggers itself")
	}
	heartbeatOnly := func(m map[string]any) bool { return topNum(m, "heartbeats") > 0 && topNum(m, "writes") == 0 }
	var why string
	batch := awaitTopBatch(t, p, await, func(tops []map[string]any) bool {
		fight, self := slices.IndexFunc(tops, isFight), slices.IndexFunc(tops, isSelf)
		leases := slices.ContainsFunc(tops, func(m map[string]any) bool {
			return m["resource"] == "leases.coordination.k8s.io" && heartbeatOnly(m)
		})
		why = fmt.Sprintf("fight at %d, self-loop at %d, a Lease heartbeating: %v", fight, self, leases)
		if fight < 0 || self < 0 || !leases {
			return false
		}
		for i, m := range tops {
			if heartbeatOnly(m) && i < max(fight, self) {
				why = fmt.Sprintf("%s/%s (heartbeats only) ranks %d, above a loop", m["resource"], m["name"], i+1)
				return false
			}
		}
		return true
	})
	t.Logf("after %s: %s", time.Since(start).Round(time.Second), why)
	for _, m := range batch {
		t.Logf("%2.0f %s %s/%s writes=%v heartbeats=%v managers=%v loop=%v", m["rank"], m["resource"], m["namespace"], m["name"], m["writes"], m["heartbeats"], topManagers(m), m["loop"])
	}
	for _, m := range batch {
		if m["resource"] == "leases.coordination.k8s.io" && topNum(m, "writes") > 0 {
			t.Errorf("a Lease's renewals counted as writes, not heartbeats: %v", m)
		}
	}
	// The fight is among the first objects (--follow 3): a full informer of it says the values
	// its newest update changed, and who made it.
	last := p.AwaitJSON(t, await, func(m map[string]any) bool {
		ch, _ := m["lastChanges"].(string)
		return m["type"] == "Top" && isFight(m) && strings.Contains(ch, "spec.replicas: ")
	})
	if by, _ := last["lastBy"].(string); !strings.Contains(by, "widget-operator") && !strings.Contains(by, "kube-controller-manager") {
		t.Errorf("the fight's last update by %q, want one of the fighters", by)
	}
	t.Logf("the fight's last update: %v by %v", last["lastChanges"], last["lastBy"])
	// The kwok nodes' status heartbeats (every 20-45s) are counted apart too.
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		return m["type"] == "Top" && m["resource"] == "nodes" && heartbeatOnly(m) && slices.Contains(topManagers(m), "kwok")
	})
	// A writer line names the operator, a resource line the ReplicaSets.
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		return m["type"] == "TopWriter" && m["manager"] == "widget-operator" && topNum(m, "writes") > 0
	})
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		return m["type"] == "TopResource" && m["resource"] == "replicasets.apps" && topNum(m, "writes") > 0
	})

	// Interrupted, it prints the final ranking with the drill-in command.
	stderr := p.Stop(t)
	final := p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Top" && m["final"] == true && isFight(m) })
	want := fmt.Sprintf("kubectl informer watch replicasets.apps %s -n %s --diff", final["name"], ns)
	if final["watch"] != want {
		t.Errorf("final Top line's watch %q, want %q", final["watch"], want)
	}
	if !strings.Contains(stderr, "API cost of the scan (") || !strings.Contains(stderr, "watch streams") {
		t.Errorf("no API cost in the summary:\n%s", stderr)
	}
	t.Log(stderr)
}

// A user who may list only Leases and Nodes: every other resource is named once as skipped, and
// the ranking goes on with what may be seen; --duration ends the run with exit 0.
func TestRealTopSkipsForbidden(t *testing.T) {
	t.Parallel() // a user and cluster role of its own in a shared cluster (docs/testcluster.md, "Parallel tests")
	c := realControlPlane(t)
	ctx := context.Background()
	user := fmt.Sprintf("top-limited-%d", time.Now().UnixNano()%100000)
	rbac := c.Clientset.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "watch"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	p := c.RunPlugin(t, ctx, "top", "--as", user, "-o", "json", "--interval", "1s", "--limit", "0", "--duration", "20s")
	skipped := p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "TopSkipped" && m["resource"] == "secrets" })
	if msg, _ := skipped["message"].(string); !strings.Contains(msg, `secrets is forbidden: User "`+user+`" cannot`) {
		t.Errorf("TopSkipped secrets: message %q, want the server's words", msg)
	}
	// The run goes on: a Lease renewal is ranked (a heartbeat).
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		return m["type"] == "Top" && m["resource"] == "leases.coordination.k8s.io" && topNum(m, "heartbeats") > 0
	})
	if code, err := p.Wait(); err != nil || code != 0 {
		t.Fatalf("exit %d, %v; stderr: %s", code, err, p.Stderr())
	}
	seen := map[string]int{}
	for _, l := range p.All() {
		var m map[string]any
		if jsonLine(l, &m) == nil && m["type"] == "TopSkipped" {
			seen[m["resource"].(string)]++
		}
	}
	for res, n := range seen {
		if n != 1 {
			t.Errorf("%s skipped %d times, want once", res, n)
		}
	}
	for _, res := range []string{"leases.coordination.k8s.io", "nodes"} {
		if seen[res] > 0 {
			t.Errorf("%s skipped, but the user may list it", res)
		}
	}
	if seen["configmaps"] != 1 || seen["deployments.apps"] != 1 {
		t.Errorf("skipped: %v; want configmaps and deployments.apps among them", seen)
	}
}

// keepWriting updates obj (an annotation) every 100ms until the test ends or stop is closed.
func keepWriting(t *testing.T, c *testenv.Cluster, gvr schema.GroupVersionResource, ns, name string) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"n":"%d"}}}`, i)
			_, _ = c.Dynamic.Resource(gvr).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-writer"})
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done) }) }
	t.Cleanup(stop)
	return stop
}

// A resource created while top runs (a new CRD) is followed from the next discovery on.
func TestTopFollowsNewCRD(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	if _, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "early"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := cluster.RunPlugin(t, ctx, "top", "-o", "json", "--interval", "500ms", "--rediscover", "1s", "--limit", "0")
	stop := keepWriting(t, cluster, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ns, "early")
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Top" && m["name"] == "early" && m["namespace"] == ns })
	stop()

	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.later.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "later.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	if err := cluster.InstallCRD(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cs, err := apiextensionsclient.NewForConfig(cluster.RESTConfig); err == nil {
			_ = cs.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
		}
	})
	gvr := schema.GroupVersionResource{Group: "later.example.com", Version: "v1", Resource: "gizmos"}
	gizmo := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "later.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g", "namespace": ns},
		// A field of its own: an object created without one has no managedFields, ever (then
		// nobody can be named; REAL-CLUSTER.md).
		"spec": map[string]any{"size": int64(1)}}}
	if _, err := cluster.Dynamic.Resource(gvr).Namespace(ns).Create(ctx, gizmo, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	keepWriting(t, cluster, gvr, ns, "g")
	// Its writer is named once an update moves its entry (writes within the second the Gizmo was
	// created tie with the creator's entry and name nobody).
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		return m["type"] == "Top" && m["resource"] == "gizmos.later.example.com" && m["name"] == "g" && topNum(m, "writes") > 0 &&
			slices.Contains(topManagers(m), "e2e-writer")
	})
}
