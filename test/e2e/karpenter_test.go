package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

var (
	nodePoolGVR  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClaimGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	kwokClassGVR = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

// karpenterTaint is on the NodePool's nodes: only the test's pods go there.
const karpenterTaint = "e2e.kubectl-informer.io/karpenter"

// A real open-source operator that is not ours: Karpenter's kwok provider (v1.14.1 from the Go
// module proxy, controller-runtime v0.23, 30-odd controllers, zap JSON logs at info as it ships
// them, cluster-scoped NodeClaims that own Nodes), provisioning a kwok Node for each pod of a
// Deployment whose pods stay pending until it does, then terminating them. Its own counters
// (controller_runtime_reconcile_total) and its own log are the ground truth: `watch nodeclaims
// --owned --owned-resources nodes --controller-logs karpenter.log --metrics-url ...` shows a
// ControllerReconcile line of the right object for every reconcile of a NodeClaim or Node whose
// lines its log holds (at least 90%, never more than its counters count), states the coverage
// against the counters in the exit summary (the provisioner's, a singleton's, as counted, not
// printed) and on the ControllerQueue lines, and follows each NodeClaim to its Node; a watch of
// the pods names every binding pods/binding although each lands on a zoned node. Karpenter's log
// and the watch's lines are kept in artifactDir.
func TestKarpenterRealOperator(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	c := testenv.StartT(t, testenv.RealControlPlane(1))
	c.PluginDir = cluster.PluginDir
	ctx := context.Background()
	artifacts := artifactDir(t)
	logFile := filepath.Join(artifacts, "karpenter.log")
	_ = os.Remove(logFile)
	k, err := c.StartKarpenter(ctx, testenv.KarpenterOptions{LogFile: logFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Stop() })
	ns := newNamespace(t, c)
	pool := "e2e-pool"
	p := c.RunPlugin(t, ctx, "watch", "nodeclaims", "--owned", "--owned-resources", "nodes", "-o", "json",
		"--controller-logs", logFile, "--metrics-url", k.MetricsURL, "--metrics-interval", "500ms")
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(artifacts, "watch.ndjson"), []byte(strings.Join(p.Strings(), "\n")), 0o644)
	})
	pods := c.RunPlugin(t, ctx, "watch", "pods", "-n", ns, "-o", "json")
	p.AwaitJSON(t, await, is("Synced", ""))
	pods.AwaitJSON(t, await, is("Synced", ""))

	createKarpenterPool(t, c, pool)
	claims := provisionPods(t, c, ns, pool, 5)
	for _, nc := range claims {
		// Its Node's name: Karpenter sets status.nodeName when it registers the Node, which may
		// come after the pods on it run.
		var node string
		testenv.Eventually(t, await, "NodeClaim "+nc.GetName()+" names its Node", func() (bool, error) {
			cur, err := c.Dynamic.Resource(nodeClaimGVR).Get(ctx, nc.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			node, _, _ = unstructured.NestedString(cur.Object, "status", "nodeName")
			return node != "", nil
		})
		awaitSeen(t, p, await, "the Node of NodeClaim "+nc.GetName()+" under it", func(m map[string]any) bool {
			return m["resource"] == "nodes" && m["name"] == node && strings.Join(ownersChain(m), ">") == "NodeClaim/"+nc.GetName()
		})
	}
	checkZonedBindings(t, c, pods, ns)
	pods.Stop(t)
	terminateClaims(t, c, ns, pool)

	truth := readKarpenterLog(t, logFile)
	before := karpenterCounters(t, k.MetricsURL)
	awaitLoggedReconciles(t, p, truth)
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}
	after := karpenterCounters(t, k.MetricsURL)
	got := karpenterReconcileLines(p)
	for ctl, ids := range got {
		lines := p.Count(func(m map[string]any) bool { return m["type"] == "ControllerReconcile" && m["controller"] == ctl })
		t.Logf("controller %s: %d ControllerReconcile lines of %d reconciles, %d reconciles of a NodeClaim or Node in its log, %d..%d counted", ctl, lines, len(ids), len(truth.objects[ctl]), before[ctl], after[ctl])
		if lines > len(ids) {
			// docs/controller-logs.md, Limits: a reading that falls more than a second behind
			// the log closes a reconcile at info before its next line.
			t.Logf("controller %s: %d reconciles split into two lines or more", ctl, lines-len(ids))
		}
		if len(ids) > after[ctl] {
			t.Errorf("controller %s: ControllerReconcile lines of %d reconciles, more than the %d its counters count", ctl, len(ids), after[ctl])
		}
		for id, obj := range ids {
			if want := truth.objects[ctl][id]; obj != want {
				t.Errorf("controller %s: the ControllerReconcile line of reconcile %s is of %q; its log says %q", ctl, id, obj, want)
			}
		}
		checkCoverage(t, p.Stderr(), ctl, lines, before[ctl], after[ctl], "")
	}
	for ctl, n := range truth.singletons {
		checkCoverage(t, p.Stderr(), ctl, n, before[ctl], after[ctl], ", none of which names an object")
	}
	shows := p.Count(func(m map[string]any) bool {
		if m["type"] != "ControllerQueue" || got[str(m["controller"])] == nil || m["reconciles"] == nil {
			return false
		}
		if _, ok := m["logShows"].(float64); !ok {
			t.Errorf("a ControllerQueue line of %v without logShows: %v", m["controller"], m)
		}
		return true
	})
	if shows == 0 {
		t.Errorf("no ControllerQueue line of a controller whose reconciles showed")
	}
	if s := p.Stderr(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
		t.Errorf("stderr:\n%s", s)
	}
	t.Logf("summary:\n%s", p.Stderr())
}

// checkCoverage finds the exit summary's coverage of controller ctl ("its log shows N of M
// reconciles its metrics count" + what) and wants N = shown and M among its counters before
// and after the run's end.
func checkCoverage(t *testing.T, stderr, ctl string, shown, before, after int, what string) {
	t.Helper()
	re := regexp.MustCompile(`controller ` + regexp.QuoteMeta(ctl) + `( \(from its log\)[^\n]*\n\s+|: )its log shows (\d+) of ([\d,]+) reconciles its metrics count since it started \(\d+%\)` + regexp.QuoteMeta(what))
	cov := re.FindStringSubmatch(stderr)
	if cov == nil {
		t.Errorf("exit summary: no coverage of controller %s (%q):\n%s", ctl, what, stderr)
		return
	}
	n, _ := strconv.Atoi(cov[2])
	m, _ := strconv.Atoi(strings.ReplaceAll(cov[3], ",", ""))
	if n != shown || m < before || m > after {
		t.Errorf("exit summary for %s: shows %d of %d, want %d of %d..%d (its counters before and after)", ctl, n, m, shown, before, after)
	}
}

// karpenterReconcileLines is the watch's ControllerReconcile lines: per controller, the
// object (Kind/name) of each reconcileID.
func karpenterReconcileLines(p *testenv.PluginRun) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, m := range p.JSON() {
		if m["type"] == "ControllerReconcile" {
			ctl := str(m["controller"])
			if out[ctl] == nil {
				out[ctl] = map[string]string{}
			}
			out[ctl][str(m["reconcileID"])] = str(m["objectKind"]) + "/" + str(m["name"])
		}
	}
	return out
}

// awaitLoggedReconciles waits for a ControllerReconcile line of every reconcile of a NodeClaim
// or Node Karpenter's log holds (they are held about a second), and, if some never come,
// wants at least 90% of each controller's.
func awaitLoggedReconciles(t *testing.T, p *testenv.PluginRun, truth karpenterLog) {
	t.Helper()
	missing := func() map[string]int {
		got, out := karpenterReconcileLines(p), map[string]int{}
		for ctl, ids := range truth.objects {
			for id := range ids {
				if _, ok := got[ctl][id]; !ok {
					out[ctl]++
				}
			}
		}
		return out
	}
	deadline := time.Now().Add(await)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	for ctl, n := range missing() {
		t.Logf("controller %s: %d of the %d reconciles its log shows have no ControllerReconcile line", ctl, n, len(truth.objects[ctl]))
		if 10*n > len(truth.objects[ctl]) {
			t.Errorf("controller %s: %d of the %d reconciles of a NodeClaim or Node its log shows have no ControllerReconcile line: want at least 90%% shown", ctl, n, len(truth.objects[ctl]))
		}
	}
}

// provisionPods creates a Deployment of n pods, one a node, that fit only the NodePool's nodes,
// waits until Karpenter has made a Node for each and every pod is bound and running, and
// returns the NodeClaims.
func provisionPods(t *testing.T, c *testenv.Cluster, ns, pool string, n int32) []unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	createPendingDeployment(t, c, ns, pool, n)
	testenv.Eventually(t, 3*await, "every pod of the Deployment bound to a Node Karpenter made", func() (bool, error) {
		list, err := c.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound := 0
		for _, pod := range list.Items {
			if pod.Spec.NodeName != "" && pod.Status.Phase == corev1.PodRunning {
				bound++
			}
		}
		return bound == int(n), nil
	})
	claims, err := c.Dynamic.Resource(nodeClaimGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims.Items) != int(n) {
		t.Fatalf("%d pods bound one a node, %d NodeClaims: want one each, Karpenter's", n, len(claims.Items))
	}
	return claims.Items
}

// checkZonedBindings wants the pods watch's update that bound each pod of ns (onto a node with
// a zone: the binding also gives the pod its zone label) attributed to pods/binding.
func checkZonedBindings(t *testing.T, c *testenv.Cluster, pods *testenv.PluginRun, ns string) {
	t.Helper()
	list, err := c.Clientset.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range list.Items {
		bound := awaitSeen(t, pods, await, "the binding of pod "+pod.Name, func(m map[string]any) bool {
			spec, _ := objectOf(m).Object["spec"].(map[string]any)
			return m["type"] == "Updated" && m["name"] == pod.Name && spec["nodeName"] == pod.Spec.NodeName
		})
		if objectOf(bound).GetLabels()["topology.kubernetes.io/zone"] == "" {
			t.Errorf("pod %s bound without its node's zone label: the zoned binding is not exercised", pod.Name)
		}
		if bound["attribution"] != "binding" {
			t.Errorf("the update that bound pod %s: attribution %v (%v), want binding", pod.Name, bound["attribution"], bound["attributionReason"])
		}
	}
}

// terminateClaims scales in as an operator does: the Deployment deleted and its pods gone, then
// every NodeClaim of the pool (Karpenter may have launched one more for a pod that was still
// pending while the Deployment went), awaiting Karpenter's termination of each and its Node.
func terminateClaims(t *testing.T, c *testenv.Cluster, ns, pool string) {
	t.Helper()
	ctx := context.Background()
	fg := metav1.DeletePropagationForeground
	if err := c.Clientset.AppsV1().Deployments(ns).Delete(ctx, "inflate", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, await, "the Deployment's pods gone", func() (bool, error) {
		pods, err := c.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=inflate"})
		return err == nil && len(pods.Items) == 0, err
	})
	sel := metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=" + pool}
	testenv.Eventually(t, 3*await, "every NodeClaim and its Node gone (Karpenter's termination)", func() (bool, error) {
		ncs, err := c.Dynamic.Resource(nodeClaimGVR).List(ctx, sel)
		if err != nil {
			return false, err
		}
		for _, nc := range ncs.Items {
			if nc.GetDeletionTimestamp() != nil {
				continue
			}
			if err := c.Dynamic.Resource(nodeClaimGVR).Delete(ctx, nc.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		nodes, err := c.Clientset.CoreV1().Nodes().List(ctx, sel)
		if err != nil {
			return false, err
		}
		return len(ncs.Items) == 0 && len(nodes.Items) == 0, nil
	})
}

func str(v any) string { s, _ := v.(string); return s }

// createKarpenterPool creates the KWOKNodeClass "default" and NodePool pool, whose nodes carry
// karpenterTaint and are never consolidated away during the test.
func createKarpenterPool(t *testing.T, c *testenv.Cluster, pool string) {
	t.Helper()
	ctx := context.Background()
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass", "metadata": map[string]any{"name": "default"}}}
	if _, err := c.Dynamic.Resource(kwokClassGVR).Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": pool},
		"spec": map[string]any{
			"template": map[string]any{"spec": map[string]any{
				"requirements": []any{
					map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}},
					map[string]any{"key": "kubernetes.io/os", "operator": "In", "values": []any{"linux"}},
				},
				"taints":       []any{map[string]any{"key": karpenterTaint, "effect": "NoSchedule"}},
				"nodeClassRef": map[string]any{"name": "default", "kind": "KWOKNodeClass", "group": "karpenter.kwok.sh"},
				"expireAfter":  "Never",
			}},
			"limits":     map[string]any{"cpu": "1000"},
			"disruption": map[string]any{"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"},
		}}}
	if _, err := c.Dynamic.Resource(nodePoolGVR).Create(ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createPendingDeployment creates a Deployment of replicas pods that fit only the NodePool's
// nodes (its label, its taint), so they stay pending until Karpenter makes them.
func createPendingDeployment(t *testing.T, c *testenv.Cluster, ns, pool string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": "inflate"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "inflate", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"karpenter.sh/nodepool": pool},
					// One pod a node: a NodeClaim each.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}}}},
					Tolerations: []corev1.Toleration{{Key: karpenterTaint, Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{Name: "c", Image: "example.com/inflate:1",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
				},
			},
		},
	}
	if _, err := c.Clientset.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// karpenterCounters is controller_runtime_reconcile_total per controller, summed over results.
func karpenterCounters(t *testing.T, url string) map[string]int {
	t.Helper()
	out := map[string]int{}
	re := regexp.MustCompile(`(?m)^controller_runtime_reconcile_total\{controller="([^"]+)"[^}]*\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(string(getPage(t, url)), -1) {
		f, _ := strconv.ParseFloat(m[2], 64)
		out[m[1]] += int(f)
	}
	return out
}

// karpenterLog is what Karpenter's own log says, read by the test itself: per controller, the
// object (Kind/name) of each reconcile of a NodeClaim or Node (controller-runtime's key named by
// controllerKind: `"NodeClaim":{"name":...}`), and how many reconciles of a singleton (the
// provisioner's: `"name":""`, no controllerKind; its lines name the NodeClaims it creates
// under the same keys, but it reconciles none of them) logged a line.
type karpenterLog struct {
	objects    map[string]map[string]string
	singletons map[string]int
}

func readKarpenterLog(t *testing.T, path string) karpenterLog {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := karpenterLog{objects: map[string]map[string]string{}, singletons: map[string]int{}}
	single := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		ctl, id, kind := str(m["controller"]), str(m["reconcileID"]), str(m["controllerKind"])
		obj, _ := m[kind].(map[string]any)
		switch {
		case ctl == "" || id == "":
		case kind == "" && str(m["name"]) == "":
			if !single[id] {
				single[id] = true
				out.singletons[ctl]++
			}
		case (kind == "NodeClaim" || kind == "Node") && str(obj["name"]) != "":
			if out.objects[ctl] == nil {
				out.objects[ctl] = map[string]string{}
			}
			out.objects[ctl][id] = kind + "/" + str(obj["name"])
		}
	}
	if len(out.objects) == 0 {
		t.Fatalf("Karpenter's log shows no reconcile of a NodeClaim or Node:\n%s", headOf(path, 40))
	}
	return out
}

// headOf is the first n lines of a file, for a failure message.
func headOf(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.SplitN(string(b), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
