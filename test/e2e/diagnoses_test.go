package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// The tests in this file hold the plugin's diagnoses on two controllers of different styles
// (issue #33): the widget-operator (controller-runtime) and the foo-controller (client-go's
// sample-controller style: informers, handleObject, a rate-limited workqueue, klog).

// testController is one of the two test controllers, with what it owns.
type testController struct {
	name     string // its field manager
	resource string // the resource it reconciles, for `watch`
	kind     string // its kind, for `kubectl annotate kind/name`
	// bugAnnotation switches its bugs on and off.
	bugAnnotation string
	// create makes the object it reconciles, named name, whose Deployment is called name too,
	// with a bug switched on ("status-loop", or "" for none).
	create func(t *testing.T, c *testenv.Cluster, ns, name, bug string, replicas int64)
}

var testControllers = []testController{
	{name: testenv.OperatorName, resource: "widgets", kind: "widget", bugAnnotation: testenv.OperatorBugAnnotation, create: createWidget},
	{name: testenv.FooControllerName, resource: "foos", kind: "foo", bugAnnotation: testenv.FooBugAnnotation, create: createFoo},
}

// start starts the controller in a new namespace of the real control plane.
func (tc testController) start(t *testing.T) (*testenv.Cluster, string) {
	t.Helper()
	if tc.name == testenv.OperatorName {
		return withOperator(t)
	}
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	startFooController(t, c, testenv.FooControllerOptions{Namespace: ns})
	return c, ns
}

// startFooController starts hack/foo-controller for the test: stopped when it ends, its log
// shown when it failed.
func startFooController(t *testing.T, c *testenv.Cluster, opts testenv.FooControllerOptions) *testenv.FooController {
	t.Helper()
	fc, err := c.StartFooController(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fc.Stop()
		if t.Failed() {
			t.Logf("foo-controller log:\n%s", fc.Log())
		}
	})
	return fc
}

// createWidget creates a Widget of size replicas with a bug switched on ("" for none).
func createWidget(t *testing.T, c *testenv.Cluster, ns, name, bug string, replicas int64) {
	t.Helper()
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: name, Size: replicas, Bug: bug})
}

// createFoo creates a Foo whose Deployment is called name, with a bug switched on.
func createFoo(t *testing.T, c *testenv.Cluster, ns, name, bug string, replicas int64) {
	t.Helper()
	foo := testenv.NewFoo(ns, name, name, replicas)
	if bug != "" {
		foo.SetAnnotations(map[string]string{testenv.FooBugAnnotation: bug})
	}
	if _, err := c.Dynamic.Resource(testenv.FooGVR).Namespace(ns).Create(context.Background(), foo, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// kubectlScaleLoop runs `kubectl scale` of a Deployment to 3, 4, 3, ... replicas (an
// "autoscaler" fighting the controller) until the returned stop is called.
func kubectlScaleLoop(t *testing.T, c *testenv.Cluster, ns, deploy string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := c.Kubectl(ctx, "scale", "deployment/"+deploy, "-n", ns, "--replicas="+strconv.Itoa(3+i%2)); err != nil && ctx.Err() == nil {
				t.Logf("kubectl scale: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// A real fight: `kubectl scale` and the controller flipping a Deployment's spec.replicas, the
// deployment controller's status updates landing between their flips, is a fight naming both
// and the field, on both controllers (issue #33: it read "busy").
func TestRealFightWithKubectlScale(t *testing.T) {
	for _, tc := range testControllers {
		t.Run(tc.name, func(t *testing.T) {
			c, ns := tc.start(t)
			ctx := context.Background()
			p := c.RunPlugin(t, ctx, "watch", "deployments", "-n", ns, "-o", "json", "--hot-loop-window", "30s")
			p.AwaitJSON(t, await, is("Synced", ""))
			tc.create(t, c, ns, "scaled", "", 2)
			awaitSeen(t, p, await, "the Deployment's Added line", is("Added", "scaled"))
			stop := kubectlScaleLoop(t, c, ns, "scaled")
			h := awaitSeen(t, p, 3*await, "a HotLoop of the Deployment", is("HotLoop", "scaled"))
			stop()
			t.Logf("HotLoop: %v %v %v: %v", h["reason"], h["loop"], h["managers"], h["suggestion"])
			wantField(t, h, "loop", "fight")
			sg, _ := h["suggestion"].(string)
			if !strings.Contains(sg, tc.name) || !strings.Contains(sg, "kubectl") || !strings.Contains(sg, "take turns at spec.replicas") {
				t.Errorf("suggestion %q, want %s and kubectl taking turns at spec.replicas", sg, tc.name)
			}
			// The deployment controller wrote between the flips: the diagnosis held anyway.
			ups := 0
			for _, l := range p.All() {
				var m map[string]any
				if jsonLine(l, &m) == nil && m["type"] == "Updated" && m["name"] == "scaled" && hasManager(m, "kube-controller-manager", "status") {
					ups++
				}
			}
			if ups == 0 {
				t.Errorf("no status update by kube-controller-manager during the fight: the test proves nothing")
			}
		})
	}
}

// A controller's self-triggered status loop, with two `kubectl annotate` writes during it, is
// `self` (issue #33: it read "taking turns … (fight)"). The loop is recorded with detection off,
// then replayed with a threshold that makes the report land on the first loop update after the
// second annotate, when both are in the window: a deterministic point of a real loop.
func TestRealSelfLoopWithAnnotate(t *testing.T) {
	for _, tc := range testControllers {
		t.Run(tc.name, func(t *testing.T) {
			c, ns := tc.start(t)
			ctx := context.Background()
			file := filepath.Join(t.TempDir(), "loop.ndjson")
			p := c.RunPlugin(t, ctx, "watch", tc.resource, "-n", ns, "-o", "json", "--hot-loop-updates", "0", "--record", file)
			p.AwaitJSON(t, await, is("Synced", ""))
			tc.create(t, c, ns, "loop", "status-loop", 1)
			loopUpdates := func(n int) {
				t.Helper()
				for range n {
					p.AwaitJSON(t, await, func(m map[string]any) bool {
						return m["type"] == "Updated" && m["name"] == "loop" && hasManager(m, tc.name, "status")
					})
				}
			}
			annotate := func(args ...string) {
				t.Helper()
				if _, err := c.Kubectl(ctx, append([]string{"annotate", tc.kind + "/loop", "-n", ns, "--overwrite"}, args...)...); err != nil {
					t.Fatal(err)
				}
				p.AwaitJSON(t, await, func(m map[string]any) bool {
					return m["type"] == "Updated" && m["name"] == "loop" && hasManager(m, "kubectl-annotate", "")
				})
			}
			loopUpdates(5)
			annotate("note=one")
			loopUpdates(3)
			annotate("note=two")
			loopUpdates(3)
			p.Stop(t)

			// The updates of the loop object, in order; k: the first loop update after the
			// second annotate, counted from 1.
			k, annotates := 0, 0
			var updates []map[string]any
			for _, m := range testenv.ReadNDJSON(t, file) {
				if m["type"] == "Updated" && m["name"] == "loop" {
					updates = append(updates, m)
				}
			}
			for i, m := range updates {
				if hasManager(m, "kubectl-annotate", "") {
					annotates++
				} else if annotates == 2 {
					k = i + 1
					break
				}
			}
			if k == 0 {
				t.Fatalf("the recording has no loop update after two annotates (%d updates)", len(updates))
			}
			r := runPlugin(t, c, "replay", file, "-o", "json", "--hot-loop-updates", strconv.Itoa(k-1), "--hot-loop-window", "10m", "--no-summary")
			if r.code != 0 {
				t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
			}
			var h map[string]any
			for _, l := range splitLines(r.stdout) {
				var m map[string]any
				if jsonLine([]byte(l), &m) == nil && m["type"] == "HotLoop" && m["name"] == "loop" {
					h = m
					break
				}
			}
			if h == nil {
				t.Fatalf("replay found no HotLoop in %d updates (threshold %d)", len(updates), k-1)
			}
			t.Logf("HotLoop after %v updates: %v %v %v: %v", h["updates"], h["reason"], h["loop"], h["managers"], h["suggestion"])
			wantField(t, h, "loop", "self")
			if h["reason"] == "alternating" {
				t.Errorf("reason alternating (\"taking turns\") for a self loop: %v", h)
			}
			if sg, _ := h["suggestion"].(string); !strings.Contains(sg, tc.name+" re-triggers itself") {
				t.Errorf("suggestion %q, want %s re-triggering itself", sg, tc.name)
			}
			if ms := fmt.Sprint(h["managers"]); !strings.Contains(ms, tc.name) {
				t.Errorf("managers %s, want %s", ms, tc.name)
			}
		})
	}
}
