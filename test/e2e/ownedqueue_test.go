package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// Issue #33, items 3 to 5, on the widget-operator and the foo-controller: --owned with the owned
// resources watched too, a resync among a reconcile's triggers and a hot loop's folded updates,
// and what the simulated queue enqueues.

// lineID names an object line for finding duplicates: type, delta, resource, object, version.
func lineID(m map[string]any) string {
	return fmt.Sprintf("%v %v %v %v/%v rv=%v", m["type"], m["delta"], m["resource"], m["namespace"], m["name"], m["resourceVersion"])
}

// createBystander creates a Deployment nothing watched owns.
func createBystander(t *testing.T, c *testenv.Cluster, ns string) {
	t.Helper()
	labels := map[string]string{"app": "bystander"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "bystander", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := c.Clientset.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// watch deploy,rs,pods --owned --events: one informer per resource, each line once (live,
// -o json and --record alike), ReplicaSets and pods with their owner chain, no warning that
// nothing is owned, no watch restart that never happened.
func TestRealOwnedResourcesWatchedToo(t *testing.T) {
	for _, tc := range testControllers {
		t.Run(tc.name, func(t *testing.T) {
			c, ns := tc.start(t)
			file := filepath.Join(t.TempDir(), "owned.ndjson")
			p := c.RunPlugin(t, context.Background(), "watch", "deploy,rs,pods", "-n", ns, "--owned", "--events", "-o", "json", "--record", file)
			for range 3 {
				p.AwaitJSON(t, await, is("Synced", ""))
			}
			tc.create(t, c, ns, "web", "", 2)
			// A pod's first line may come before its ReplicaSet's (lines are not held for a
			// watched owner); its later lines (kwok runs it) carry the chain.
			isOwnedPod := func(m map[string]any) bool {
				return (m["type"] == "Added" || m["type"] == "Updated") && m["resource"] == "pods" && strings.Contains(fmt.Sprint(m["owners"]), "ReplicaSet")
			}
			awaitSeen(t, p, 2*await, "a pod of web's ReplicaSet with its owners", isOwnedPod)
			awaitSeen(t, p, await, "a KubeEvent", is("KubeEvent", ""))
			// A ReplicaSet's lines that come before its Deployment's (another informer) have no
			// chain yet; one written after the Deployment's line was printed must have it. The
			// test writes that line itself instead of waiting for a status update that may have
			// come already.
			awaitSeen(t, p, await, "web's Deployment", func(m map[string]any) bool {
				return m["resource"] == "deployments" && m["name"] == "web"
			})
			rs := awaitSeen(t, p, await, "web's ReplicaSet", func(m map[string]any) bool {
				return m["resource"] == "replicasets" && (m["type"] == "Added" || m["type"] == "Updated")
			})
			if _, err := c.Kubectl(context.Background(), "annotate", "rs/"+fmt.Sprint(rs["name"]), "-n", ns, "e2e.example.com/touched=1"); err != nil {
				t.Fatal(err)
			}
			awaitSeen(t, p, await, "the touched ReplicaSet with its Deployment owner", func(m map[string]any) bool {
				return m["resource"] == "replicasets" && m["type"] == "Updated" && m["name"] == rs["name"] &&
					strings.Contains(fmt.Sprint(objectOf(m).GetAnnotations()), "touched") && strings.Contains(fmt.Sprint(m["owners"]), "Deployment")
			})
			stderr := p.Stop(t)
			if strings.Contains(stderr, "nothing is known to be owned") {
				t.Errorf("a false warning:\n%s", stderr)
			}
			if !strings.Contains(stderr, " 0 watch restarts") {
				t.Errorf("the summary counts watch restarts that never happened:\n%s", summaryLine(stderr, "informer:"))
			}
			for name, lines := range map[string][]map[string]any{"stdout": jsonLines(p.All()), "--record": testenv.ReadNDJSON(t, file)} {
				seen := map[string]int{}
				rsOwned := 0
				for _, m := range lines {
					switch m["type"] {
					case "Added", "Updated", "Deleted":
					default:
						continue
					}
					seen[lineID(m)]++
					if m["resource"] == "replicasets" && strings.Contains(fmt.Sprint(m["owners"]), "Deployment") {
						rsOwned++
					}
				}
				if rsOwned == 0 {
					t.Errorf("%s: no ReplicaSet line with its owner", name)
				}
				for id, n := range seen {
					if n > 1 {
						t.Errorf("%s: %s printed %d times", name, id, n)
					}
				}
			}
		})
	}
}

// jsonLines decodes the JSON lines of a run's stdout.
func jsonLines(lines [][]byte) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		var m map[string]any
		if jsonLine(l, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// A resync among a reconcile's triggers reads "Sync", never "Updated"; a hot loop's Folded
// lines count its updates, never a resync's redeliveries.
func TestRealResyncNeverAnUpdate(t *testing.T) {
	for _, tc := range testControllers {
		t.Run(tc.name, func(t *testing.T) {
			c, ns := tc.start(t)
			ctx := context.Background()
			file := filepath.Join(t.TempDir(), "resync.ndjson")
			p := c.RunPlugin(t, ctx, append([]string{"watch", tc.resource, "-n", ns, "--resync", "1s", "--show-reconciles",
				"--hot-loop-window", "3s", "--record", file}, humanArgs...)...)
			awaitLine(t, p, "cache synced")
			tc.create(t, c, ns, "loop", "status-loop", 1)
			awaitLine(t, p, "HOT LOOP")
			awaitLine(t, p, "[RESYNC")
			awaitLine(t, p, "Folded ")
			if _, err := c.Kubectl(ctx, "annotate", tc.kind+"/loop", "-n", ns, tc.bugAnnotation+"-"); err != nil {
				t.Fatal(err)
			}
			awaitLine(t, p, "hot loop ended")
			awaitLine(t, p, "trigger: Sync rv=")
			p.Stop(t)
			lines := bytesToStrings(p.All())
			key := ns + "/loop"
			var shown, folded int
			for _, l := range lines {
				if strings.HasPrefix(l, "Updated ") && strings.Contains(l, "  "+key+"  ") && !strings.Contains(l, "[RESYNC") {
					shown++
				}
				if m := foldedLine.FindStringSubmatch(l); m != nil && m[1] == key {
					n, _ := strconv.Atoi(m[2])
					folded += n
				}
			}
			changes := 0
			for _, m := range testenv.ReadNDJSON(t, file) {
				if m["type"] == "Updated" && m["name"] == "loop" && m["delta"] == "Updated" {
					changes++
				}
			}
			t.Logf("%d updates recorded; %d shown, %d folded", changes, shown, folded)
			if shown+folded != changes {
				t.Errorf("%d updates shown + %d folded, want the recording's %d changes (a resync is no update)", shown, folded, changes)
			}
		})
	}
}

// The simulated queue enqueues what a controller would: the watched object's key for its own
// events and for those of the objects it owns (the trigger names them); nothing for Events or
// for an --owned-resources object no watched object owns.
func TestRealQueueEnqueuesOwners(t *testing.T) {
	for _, tc := range testControllers {
		t.Run(tc.name, func(t *testing.T) {
			c, ns := tc.start(t)
			createBystander(t, c, ns)
			p := c.RunPlugin(t, context.Background(), "watch", tc.resource, "-n", ns, "--owned", "--owned-resources", "deployments",
				"--events", "--show-reconciles", "-o", "json")
			p.AwaitJSON(t, await, is("Synced", ""))
			tc.create(t, c, ns, "web", "", 1)
			key := ns + "/web"
			awaitSeen(t, p, 2*await, "a reconcile of web triggered by its Deployment", func(m map[string]any) bool {
				if m["type"] != "Reconciled" || m["key"] != key {
					return false
				}
				ts, _ := m["triggers"].([]any)
				for _, x := range ts {
					if tr, _ := x.(map[string]any); tr["resource"] == "deployments.apps" && tr["key"] == key {
						return true
					}
				}
				return false
			})
			awaitSeen(t, p, await, "a KubeEvent", is("KubeEvent", ""))
			p.Stop(t)
			reconciles := 0
			for _, m := range jsonLines(p.All()) {
				if m["type"] != "Reconciled" {
					continue
				}
				reconciles++
				if m["key"] != key {
					t.Errorf("a reconcile of %v, which nothing watched owns or is: %v", m["key"], m)
				}
				if strings.Contains(fmt.Sprint(m["triggers"]), "events") {
					t.Errorf("an Event triggered a reconcile: %v", m["triggers"])
				}
			}
			t.Logf("%d reconciles of %s", reconciles, key)
		})
	}
}
