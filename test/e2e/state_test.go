package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// The tests in this file check the state on object lines (issue 22): kstatus's status, the
// kind's summary, the transition an update made.

// stateOf is a line's "state" object, or nil.
func stateOf(m map[string]any) map[string]any {
	s, _ := m["state"].(map[string]any)
	return s
}

// stateIs matches object lines of resource (and name, if not "") whose state has every field
// of want.
func stateIs(resource, name string, want map[string]string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		s := stateOf(m)
		if s == nil || m["resource"] != resource || (name != "" && m["name"] != name) {
			return false
		}
		for k, v := range want {
			if got, _ := s[k].(string); got != v {
				return false
			}
		}
		return true
	}
}

// replayJSON replays a recording as -o json, without a cluster, and says how it differs from
// the live lines.
func replayJSON(t *testing.T, file string, live []string) {
	t.Helper()
	r := runPlugin(t, cluster, "replay", file, "-o", "json", "--no-summary", "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	if r.code != 0 {
		t.Fatalf("replay: exit %d; stderr %s", r.code, r.stderr)
	}
	if diff := cmpLines(live, splitLines(r.stdout)); diff != "" {
		t.Errorf("replayed lines (states included) differ from the live run:\n%s", diff)
	}
}

// A rollout on the real control plane, watched as deploy,rs,pods: pods go Pending → Running and
// the replaced ones Terminating; the Deployment goes InProgress → Current with its replica
// counts; a replay of the recording says the same, byte for byte.
func TestRealStateRollout(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	file := filepath.Join(t.TempDir(), "rollout.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "deploy,rs,pods", "-n", ns, "-o", "json", "--record", file)
	for range 3 {
		p.AwaitJSON(t, await, is("Synced", ""))
	}
	if _, err := c.Kubectl(ctx, "create", "deployment", "web", "-n", ns, "--image=example.com/web:1", "--replicas=2"); err != nil {
		t.Fatal(err)
	}
	// Each pod: created Pending (not ready), then Running and Ready on a kwok node, said once.
	running := map[string]bool{}
	awaitSeen(t, p, 2*await, "2 pods going 0/1 Pending → 1/1 Running, InProgress → Current", func(m map[string]any) bool {
		if stateIs("pods", "", map[string]string{"previousSummary": "0/1 Pending", "summary": "1/1 Running", "previous": "InProgress", "status": "Current"})(m) {
			running[m["name"].(string)] = true
		}
		return len(running) == 2
	})
	for _, m := range p.JSON() {
		if m["resource"] != "pods" || !running[fmt.Sprint(m["name"])] || m["type"] != "Added" {
			continue
		}
		if s := stateOf(m); s["status"] != "InProgress" || s["summary"] != "0/1 Pending" {
			t.Errorf("pod %s added with state %v, want InProgress 0/1 Pending", m["name"], s)
		}
	}
	// One Deployment's lines come in order: AwaitJSON goes through them one after the other.
	p.AwaitJSON(t, 2*await, stateIs("deployments", "web",
		map[string]string{"previous": "InProgress", "status": "Current", "summary": "2/2 ready, 2 updated, 2 available"}))
	awaitSeen(t, p, await, "a ReplicaSet Current with 2/2 ready", stateIs("replicasets", "",
		map[string]string{"status": "Current", "summary": "2/2 ready, 2 available"}))

	// The rollout: a new generation puts the Deployment back InProgress until the new pods run;
	// the old pods are deleted (Terminating, then gone).
	if _, err := c.Kubectl(ctx, "set", "image", "deployment/web", "-n", ns, "web=example.com/web:2"); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, stateIs("deployments", "web", map[string]string{"previous": "Current", "status": "InProgress"}))
	p.AwaitJSON(t, 2*await, stateIs("deployments", "web",
		map[string]string{"previous": "InProgress", "status": "Current", "summary": "2/2 ready, 2 updated, 2 available"}))
	terminating := map[string]bool{}
	awaitSeen(t, p, 2*await, "both old pods Current → Terminating, 1/1 Running→Terminating", func(m map[string]any) bool {
		if running[fmt.Sprint(m["name"])] && stateIs("pods", "", map[string]string{"previous": "Current", "status": "Terminating", "summary": "1/1 Terminating"})(m) {
			terminating[m["name"].(string)] = true
			if msg, _ := stateOf(m)["message"].(string); !strings.HasPrefix(msg, "deletion requested") {
				t.Errorf("Terminating pod %s: message %q", m["name"], msg)
			}
		}
		return len(terminating) == 2
	})

	p.Stop(t)
	live := p.Strings()
	t.Logf("%d lines; replaying them", len(live))
	replayJSON(t, file, live)
}

// A pod whose container waits in CrashLoopBackOff (its status written through the status
// subresource, as a kubelet would; the pod is bound to a node no kwok runs) is Failed and says
// the reason and the restarts, in JSON and on the human line.
func TestRealStateCrashLoop(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	p := c.RunPlugin(t, ctx, "watch", "pods", "-n", ns, "-o", "json")
	human := c.RunPlugin(t, ctx, "watch", "pods", "-n", ns, "--color", "never", "--timestamps", "none")
	p.AwaitJSON(t, await, is("Synced", ""))
	awaitLine(t, human, "cache synced")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "crash", Namespace: ns},
		Spec:       corev1.PodSpec{NodeName: "no-kubelet-here", Containers: []corev1.Container{{Name: "app", Image: "example.com/crash:1"}}},
	}
	if _, err := c.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, stateIs("pods", "crash", map[string]string{"status": "InProgress", "summary": "0/1 Pending"}))
	status := `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"}],` +
		`"containerStatuses":[{"name":"app","image":"example.com/crash:1","imageID":"","ready":false,"restartCount":3,` +
		`"state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s restarting failed container"}},` +
		`"lastState":{"terminated":{"exitCode":1,"reason":"Error","startedAt":"2026-01-01T00:00:00Z","finishedAt":"2026-01-01T00:00:01Z"}}}]}}`
	if _, err := c.Clientset.CoreV1().Pods(ns).Patch(ctx, "crash", types.StrategicMergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	m := p.AwaitJSON(t, await, stateIs("pods", "crash", map[string]string{"status": "Failed", "summary": "0/1 CrashLoopBackOff, 3 restarts"}))
	s := stateOf(m)
	if s["previous"] != "InProgress" || s["previousSummary"] != "0/1 Pending" || s["message"] != "Containers in CrashLoop state: app" {
		t.Errorf("crash-looping pod state %v, want previous InProgress, 0/1 Pending, kstatus's CrashLoop message", s)
	}
	line := awaitLine(t, human, "CrashLoopBackOff")
	if !strings.Contains(line, "InProgress → Failed (Containers in CrashLoop state: app)  0/1 Pending → 0/1 CrashLoopBackOff, 3 restarts") {
		t.Errorf("human line %q, want the transition and the reason", line)
	}
}

// gadgetGVR is the resource of gadgetCRD.
var gadgetGVR = schema.GroupVersionResource{Group: "state.example.com", Version: "v1", Resource: "gadgets"}

// gadgetCRD has printer columns as kubebuilder makes them: a condition, a spec field, an age
// (left out: it changes with the clock) and a priority-1 column for -o wide.
func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.state.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "state.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: &preserve},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
					{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
					{Name: "Owner", Type: "string", JSONPath: ".spec.owner", Priority: 1},
				},
			}},
		},
	}
}

// A custom resource shows its CRD's printer columns (read once at startup): in JSON, on the
// human -o wide line (the priority-1 column too), and in a replay of the recording.
func TestStateCustomColumns(t *testing.T) {
	ctx := context.Background()
	if err := cluster.InstallCRD(ctx, gadgetCRD()); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, cluster)
	file := filepath.Join(t.TempDir(), "gadgets.ndjson")
	p := cluster.RunPlugin(t, ctx, "watch", "gadgets", "-n", ns, "-o", "json", "--record", file)
	wide := cluster.RunPlugin(t, ctx, "watch", "gadgets", "-n", ns, "-o", "wide", "--color", "never", "--timestamps", "none")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	if res, _ := info["resources"].([]any); len(res) != 1 || len(res[0].(map[string]any)["printerColumns"].([]any)) != 4 {
		t.Errorf("Informer resources %v, want gadgets with its 4 printer columns", info["resources"])
	}
	p.AwaitJSON(t, await, is("Synced", ""))
	awaitLine(t, wide, "cache synced")

	gadgets := cluster.Dynamic.Resource(gadgetGVR).Namespace(ns)
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "state.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1", "namespace": ns, "finalizers": []any{"state.example.com/cleanup"}},
		"spec":     map[string]any{"replicas": int64(2), "owner": "team-a"},
	}}
	if _, err := gadgets.Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No status yet: kstatus says Current; the columns say what the spec holds.
	p.AwaitJSON(t, await, stateIs("gadgets", "g1", map[string]string{"status": "Current", "summary": "Replicas=2"}))
	for _, ready := range []string{"False", "True"} {
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q,"reason":"Test","message":"ready is %s"}]}}`, ready, ready)
		if _, err := gadgets.Patch(ctx, "g1", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	p.AwaitJSON(t, await, stateIs("gadgets", "g1", map[string]string{"status": "InProgress", "summary": "Ready=False, Replicas=2", "message": "ready is False", "previous": "Current"}))
	p.AwaitJSON(t, await, stateIs("gadgets", "g1", map[string]string{"status": "Current", "summary": "Ready=True, Replicas=2", "previous": "InProgress", "previousSummary": "Ready=False, Replicas=2"}))
	line := awaitLine(t, wide, "Ready=False→True")
	if !strings.Contains(line, "InProgress → Current  Ready=False→True, Replicas=2") || !strings.Contains(line, "Owner=team-a") {
		t.Errorf("-o wide line %q, want the transition, the columns and Owner=team-a", line)
	}
	// A deletion request: Terminating, held by the finalizer.
	if err := gadgets.Delete(ctx, "g1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	m := p.AwaitJSON(t, await, stateIs("gadgets", "g1", map[string]string{"status": "Terminating", "previous": "Current", "summary": "Ready=True, Replicas=2"}))
	if f, _ := stateOf(m)["finalizers"].([]any); len(f) != 1 || f[0] != "state.example.com/cleanup" {
		t.Errorf("Terminating state %v, want the finalizer holding it", stateOf(m))
	}
	awaitLine(t, wide, "Terminating (waiting for finalizers: state.example.com/cleanup)")
	if _, err := gadgets.Patch(ctx, "g1", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, is("Deleted", "g1"))

	wide.Stop(t)
	p.Stop(t)
	live := p.Strings()
	replayJSON(t, file, live)
	if raw, err := os.ReadFile(file); err != nil || !strings.Contains(string(raw), `"printerColumns"`) {
		t.Errorf("the recording's header has no printer columns (%v)", err)
	}
}

// A list large enough to be decoded ahead (pkg/watch: 256 objects) has its Added lines' states
// read as their objects are decoded, without managedFields, and no object on the lines
// (watch.Config.Prepare; -v=4 says so). Against a run that reads them from the objects (with
// --record nothing is prepared): the same lines, among them a pod held by a finalizer whose
// Terminating state reads its finalizers, deletion grace and deletion time.
func TestStatePreparedListLines(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	const replicas = 300
	// A kwok node of their own with room for them (the shared ones have room for 110 each).
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node", Annotations: map[string]string{testenv.KwokNodeAnnotation: "fake"},
		Labels: map[string]string{"kubernetes.io/hostname": ns + "-node", "type": "kwok"}}}
	room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("400")}
	node.Status = corev1.NodeStatus{Allocatable: room, Capacity: room.DeepCopy()}
	if _, err := c.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Clientset.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
	})
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/hostname": node.Name},
					Containers: []corev1.Container{{Name: "web", Image: "example.com/web:1"}}}}}}
	if _, err := c.Clientset.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := c.Clientset.CoreV1().Pods(ns)
	held := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: ns, Finalizers: []string{"example.com/hold"}},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"no-such-node": "x"}, Containers: []corev1.Container{{Name: "c", Image: "example.com/web:1"}}}}
	if _, err := pods.Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pods.Patch(context.Background(), "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	// kube-controller-manager's pod GC marks an unscheduled pod that terminates Failed, within 20 s
	// of its deletion, then deletes it again with no grace (a no-op here). Had it done so between
	// the two runs below, they would have seen two versions of the pod. The test writes the Failed
	// phase itself first, so that the pod GC has nothing left to write.
	if _, err := pods.Patch(ctx, "held", types.MergePatchType, []byte(`{"status":{"phase":"Failed"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitRunningPods(t, c, ns, replicas)
	heldNow := func() *corev1.Pod {
		p, err := pods.Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := heldNow()

	added := func(args ...string) ([]string, string) {
		p := c.RunPlugin(t, ctx, append([]string{"watch", "pods", "-n", ns, "--diff", "--color", "never", "--timestamps", "none", "--no-headers", "-v=4"}, args...)...)
		var lines []string
		for {
			l := awaitLine(t, p, "")
			if strings.Contains(l, "cache synced") {
				break
			}
			if f := strings.Fields(l); len(f) > 0 && f[0] == "Added" {
				lines = append(lines, l)
			}
		}
		stderr := p.Stop(t)
		slices.Sort(lines)
		return lines, stderr
	}
	prepared, stderr := added()
	if !strings.Contains(stderr, fmt.Sprintf("pods: %d lines of a list prepared as their objects were decoded", replicas+1)) {
		t.Errorf("no -v=4 line saying %d lines were prepared:\n%s", replicas+1, stderr)
	}
	read, stderr := added("--record", filepath.Join(t.TempDir(), "rec.ndjson"))
	if strings.Contains(stderr, "lines of a list prepared") {
		t.Errorf("a recorded run prepared its lines:\n%s", stderr)
	}
	if len(prepared) != replicas+1 {
		t.Fatalf("%d Added lines, want %d", len(prepared), replicas+1)
	}
	if after := heldNow(); after.ResourceVersion != before.ResourceVersion {
		var by []string
		for _, m := range after.ManagedFields {
			by = append(by, m.Manager+" "+string(m.Operation)+" "+m.Subresource)
		}
		t.Fatalf("the held pod was written between the runs (rv %s, then %s; its writers: %v): the two runs did not see the same objects",
			before.ResourceVersion, after.ResourceVersion, by)
	}
	if diff := cmp.Diff(read, prepared); diff != "" {
		t.Errorf("Added lines (-read from the objects +prepared):\n%s", diff)
	}
	running := 0
	for _, l := range prepared {
		switch {
		case strings.Contains(l, ns+"/held "):
			if !strings.Contains(l, "Terminating") || !strings.Contains(l, "example.com/hold") {
				t.Errorf("the held pod's line does not say it terminates, held by its finalizer: %q", l)
			}
		case strings.Contains(l, "Current") && strings.Contains(l, "1/1 Running"):
			running++
		}
	}
	if running != replicas {
		t.Errorf("%d lines say a running pod, want %d:\n%s", running, replicas, strings.Join(prepared[:5], "\n"))
	}
}
