package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// reenactLabel is the label a reenactment puts on what it creates (internal/reenact.Label).
const reenactLabel = "kubectl-informer.dev/reenactment"

// kubeContext is the name of the context of c's kubeconfig, for reenact's --context.
func kubeContext(t *testing.T, c *testenv.Cluster) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext == "" {
		t.Fatal("the test kubeconfig has no current context")
	}
	return cfg.CurrentContext
}

// recordStatusLoop records the widget-operator's self-triggering status loop in ns (the
// operator running there with its bug): a quiet Widget "calm" that is there before the
// recording starts, with the operator's status, and Widget "loop" created during it with the
// bug's annotation, until the recording holds the HotLoop. It returns the recording and its
// HotLoop line.
func recordStatusLoop(t *testing.T, c *testenv.Cluster, ns string) (string, map[string]any) {
	t.Helper()
	ctx := context.Background()
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Stop()
	createWidget(t, c, ns, "calm", "", 0)
	awaitWidget(t, c, ns, "calm", "its status by widget-operator", func(w *unstructured.Unstructured) bool {
		ph, _, _ := unstructured.NestedString(w.Object, "status", "phase")
		return ph != ""
	})
	rec := filepath.Join(t.TempDir(), "incident.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--record", rec, "--hot-loop-window", "3s")
	p.AwaitJSON(t, await, is("Synced", ""))
	createWidget(t, c, ns, "loop", "status-loop", 0)
	hot := p.AwaitJSON(t, await, is("HotLoop", "loop"))
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); err != nil || code != 0 {
		t.Fatalf("the recording's watch: exit %d, %v; stderr: %s", code, err, p.Stderr())
	}
	return rec, hot
}

// awaitWidget waits until Widget ns/name satisfies cond.
func awaitWidget(t *testing.T, c *testenv.Cluster, ns, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, await, true, func(ctx context.Context) (bool, error) {
		w, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not there yet
		}
		last = w
		return cond(w), nil
	})
	if err != nil {
		t.Fatalf("Widget %s/%s never had %s: %v (last: %v)", ns, name, what, err, last)
	}
	return last
}

func managersOf(o *unstructured.Unstructured) []string {
	var out []string
	for _, e := range o.GetManagedFields() {
		out = append(out, e.Manager+"/"+e.Subresource)
	}
	return out
}

// The scenario: the widget-operator's status loop, recorded, then reenacted with
// --skip-manager widget-operator while the operator runs against the reenactment: with its bug,
// the HotLoop comes back, named the same way; with the fixed build, no HotLoop, and --compare
// says the loop is gone and how many writes were saved.
func TestReenactStatusLoop(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	kctx := kubeContext(t, c)
	ns := newNamespace(t, c)
	rec, orig := recordStatusLoop(t, c, ns)

	t.Run("bug on", func(t *testing.T) {
		nsA := ns + "-a"
		op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: nsA})
		if err != nil {
			t.Fatal(err)
		}
		defer op.Stop()
		p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--namespace-map", ns+"="+nsA, "--name", "bug-on",
			"--skip-manager", testenv.OperatorName, "-o", "json", "--hot-loop-window", "3s", "--follow", "--print-rv-map")
		hot := p.AwaitJSON(t, await, func(m map[string]any) bool { return is("HotLoop", "loop")(m) && m["namespace"] == nsA })
		for _, f := range []string{"loop", "reason", "fields", "managers"} {
			if fmt.Sprint(hot[f]) != fmt.Sprint(orig[f]) {
				t.Errorf("reenacted HotLoop %s = %v, the recorded one's %v", f, hot[f], orig[f])
			}
		}
		// The reenacted Widgets name the recorded writers, the operator under test its own.
		loop := awaitWidget(t, c, nsA, "loop", "the operator's status", func(w *unstructured.Unstructured) bool {
			return slices.Contains(managersOf(w), testenv.OperatorName+"/status")
		})
		if loop.GetLabels()[reenactLabel] != "bug-on" {
			t.Errorf("reenacted Widget labels %v, want %s=bug-on", loop.GetLabels(), reenactLabel)
		}
		creator := recordedCreator(t, rec, "loop")
		if !slices.Contains(managersOf(loop), creator+"/") {
			t.Errorf("reenacted Widget's managers %v do not name the recorded creator %s", managersOf(loop), creator)
		}
		awaitStderr(t, p, "reenact: played 1 initial objects, 1 creates")
		if err := p.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code, err := p.Wait(); err != nil || code != 0 {
			t.Fatalf("exit %d, %v", code, err)
		}
		t.Logf("reenact with the bug on, stderr:\n%s", p.Stderr())
		// The recorded resourceVersions of the two creates, each with the target's own.
		for _, name := range []string{"calm", "loop"} {
			re := regexp.MustCompile(`reenact: resourceVersion (\d+) -> (\d+) \(widgets ` + nsA + `/` + name + `\)`)
			m := re.FindStringSubmatch(p.Stderr())
			if m == nil || m[1] != recordedRV(t, rec, name) {
				t.Errorf("--print-rv-map of %s: %v, want its recorded resourceVersion %s", name, m, recordedRV(t, rec, name))
			}
		}
		// calm's status and every status write of the loop were the operator's: none played.
		if !regexp.MustCompile(`skipped \d+ by widget-operator \(--skip-manager\)`).MatchString(p.Stderr()) {
			t.Errorf("stderr does not say what was skipped:\n%s", p.Stderr())
		}
	})

	t.Run("fixed", func(t *testing.T) {
		nsB := ns + "-b"
		op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: nsB, Fixed: true})
		if err != nil {
			t.Fatal(err)
		}
		defer op.Stop()
		p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--namespace-map", ns+"="+nsB,
			"--skip-manager", testenv.OperatorName, "-o", "json", "--hot-loop-window", "3s", "--follow", "--compare", rec)
		// The fixed operator did reconcile the loop Widget (its status is the operator's)...
		// (an Added line when that was before the watch listed it, an Updated line after).
		awaitSeen(t, p, await, "the loop Widget's status by the fixed operator", func(m map[string]any) bool {
			return (m["type"] == "Updated" || m["type"] == "Added") && m["name"] == "loop" && slices.Contains(managersOf(objectOf(m)), testenv.OperatorName+"/status")
		})
		awaitStderr(t, p, "reenact: played 1 initial objects, 1 creates")
		// ...and for two hot-loop windows after it, did not write it again and again.
		time.Sleep(6 * time.Second)
		if err := p.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code, err := p.Wait(); err != nil || code != 0 {
			t.Fatalf("exit %d, %v", code, err)
		}
		for _, l := range p.All() {
			if strings.Contains(string(l), `"type":"HotLoop"`) {
				t.Errorf("a HotLoop with the fixed operator: %s", l)
			}
		}
		stderr := p.Stderr()
		t.Logf("reenact with the fixed operator, stderr:\n%s", stderr)
		if !strings.Contains(stderr, "hot loop gone: widgets.example.com "+nsB+"/loop (self by widget-operator: status.lastReconciled) is in the original, not in the reenactment") {
			t.Errorf("--compare does not say the loop is gone:\n%s", stderr)
		}
		m := regexp.MustCompile(`writes saved: widget-operator made (\d+) updates in the original, (\d+) in the reenactment \((\d+) fewer\)`).FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("--compare does not say the writes saved:\n%s", stderr)
		}
		o, _ := strconv.Atoi(m[1])
		r, _ := strconv.Atoi(m[2])
		t.Logf("widget-operator: %d updates recorded, %d reenacted with the fix", o, r)
		if o < 5 || r >= o {
			t.Errorf("the original's %d operator updates, the reenactment's %d: want the loop's many and far fewer", o, r)
		}
	})
}

// recordedRV is the resourceVersion of the recorded Widget name's first Added line.
func recordedRV(t *testing.T, rec, name string) string {
	t.Helper()
	for _, l := range readLines(t, rec) {
		var m map[string]any
		if jsonLine([]byte(l), &m) == nil && m["type"] == "Added" && m["name"] == name {
			rv, _ := m["resourceVersion"].(string)
			return rv
		}
	}
	t.Fatalf("the recording has no Added line of %s", name)
	return ""
}

// recordedCreator is the field manager of the recorded Widget name's first managedFields entry.
func recordedCreator(t *testing.T, rec, name string) string {
	t.Helper()
	for _, l := range readLines(t, rec) {
		var m map[string]any
		if jsonLine([]byte(l), &m) == nil && m["type"] == "Added" && m["name"] == name {
			if mf := objectOf(m).GetManagedFields(); len(mf) > 0 {
				return mf[0].Manager
			}
		}
	}
	t.Fatalf("the recording has no Added line of %s with managedFields", name)
	return ""
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// awaitStderr waits until the run's stderr holds s.
func awaitStderr(t *testing.T, p *testenv.PluginRun, s string) {
	t.Helper()
	deadline := time.Now().Add(await)
	for !strings.Contains(p.Stderr(), s) {
		select {
		case <-p.Done():
			if strings.Contains(p.Stderr(), s) {
				return
			}
			t.Fatalf("kubectl informer exited without %q on stderr:\n%s", s, p.Stderr())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr after %s:\n%s", s, await, p.Stderr())
		}
	}
}

// reenactedSomething fails the test when anything carries the reenactment label: a namespace
// or a CRD.
func assertNothingWritten(t *testing.T, c *testenv.Cluster, namespaces ...string) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range namespaces {
		if _, err := c.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s: %v, want it never created", ns, err)
		}
	}
	list, err := c.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: reenactLabel + "=nothing"})
	if err != nil || len(list.Items) > 0 {
		t.Errorf("namespaces of the reenactment: %v, %v", list, err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	l, err := c.Dynamic.Resource(crds).List(ctx, metav1.ListOptions{LabelSelector: reenactLabel + "=nothing"})
	if err != nil || len(l.Items) > 0 {
		t.Errorf("CRDs of the reenactment: %v, %v", l, err)
	}
}

// runFails runs reenact and wants exit 1 and one stderr line holding want.
func runFails(t *testing.T, c *testenv.Cluster, want string, args ...string) {
	t.Helper()
	p := c.RunPlugin(t, context.Background(), append([]string{"reenact"}, args...)...)
	code, err := p.Wait()
	if err != nil || code != 1 {
		t.Fatalf("exit %d, %v; want 1", code, err)
	}
	stderr := strings.TrimSpace(p.Stderr())
	if strings.Count(stderr, "\n") > 0 || !strings.Contains(stderr, want) || !strings.HasPrefix(stderr, "error: ") {
		t.Errorf("stderr %q, want one line with %q", stderr, want)
	}
	if len(p.All()) > 0 {
		t.Errorf("stdout: %q", p.All())
	}
}

// Bad input is one clear line, exit 1, and nothing written: no explicit context, a damaged
// recording, a recording of a resource the target lacks. With --create-crds that last one is
// reenacted (the CRD made from the recording), and --cleanup removes it all.
func TestReenactBadInput(t *testing.T) {
	c := cluster
	ctx := context.Background()
	kctx := kubeContext(t, c)
	ns := newNamespace(t, c)
	createWidget(t, c, ns, "w", "", 1)
	rec := filepath.Join(t.TempDir(), "widgets.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--record", rec)
	p.AwaitJSON(t, await, is("Synced", ""))
	_ = p.Signal(os.Interrupt)
	if code, err := p.Wait(); err != nil || code != 0 {
		t.Fatalf("recording: exit %d, %v", code, err)
	}
	target := ns + "-x"
	mapping := ns + "=" + target

	t.Run("no context", func(t *testing.T) {
		runFails(t, c, "name its context with --context", rec, "--namespace-map", mapping, "--name", "nothing")
		assertNothingWritten(t, c, target)
	})
	t.Run("damaged", func(t *testing.T) {
		lines := readLines(t, rec)
		if len(lines) < 3 {
			t.Fatalf("recording of %d lines", len(lines))
		}
		lines[2] = `{"type":"Added","name":` // cut short, as a full disk leaves a line
		bad := filepath.Join(t.TempDir(), "damaged.ndjson")
		if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		runFails(t, c, "line 3", bad, "--context", kctx, "--namespace-map", mapping, "--name", "nothing")
		assertNothingWritten(t, c, target)
	})
	t.Run("resource the target lacks", func(t *testing.T) {
		gizmos := gizmoCRD()
		gvr, grec := recordGizmo(t, c, gizmos, ns, 12)
		deleteCRD(t, c, gizmos.Name, gvr)
		runFails(t, c, `the server doesn't have a resource type "gizmos.v1.`+gizmos.Spec.Group+`"`, grec, "--context", kctx, "--namespace-map", mapping, "--name", "nothing")
		assertNothingWritten(t, c, target)

		// --create-crds makes the CRD from the recording; --cleanup deletes what was made.
		r := c.RunPlugin(t, ctx, "reenact", grec, "--context", kctx, "--namespace-map", mapping, "--name", "gizmo-run", "--create-crds", "--settle", "1s", "-o", "json")
		if code, err := r.Wait(); err != nil || code != 0 {
			t.Fatalf("--create-crds: exit %d, %v; stderr:\n%s", code, err, r.Stderr())
		}
		got, err := c.Dynamic.Resource(gvr).Namespace(target).Get(ctx, "g1", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the reenacted Gizmo: %v", err)
		}
		if teeth, _, _ := unstructured.NestedInt64(got.Object, "spec", "teeth"); teeth != 12 || got.GetLabels()[reenactLabel] != "gizmo-run" {
			t.Errorf("reenacted Gizmo %v", got.Object)
		}
		cl := c.RunPlugin(t, ctx, "reenact", grec, "--context", kctx, "--cleanup", "--name", "gizmo-run")
		if code, err := cl.Wait(); err != nil || code != 0 {
			t.Fatalf("--cleanup: exit %d, %v; stderr:\n%s", code, err, cl.Stderr())
		}
		if !strings.Contains(cl.Stderr(), "reenact: deleted 3 ") { // the Gizmo, its namespace, the CRD
			t.Errorf("--cleanup said: %s", cl.Stderr())
		}
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		if _, err := c.Dynamic.Resource(crds).Get(ctx, gizmos.Name, metav1.GetOptions{}); err == nil {
			// Deletion of a CRD is asynchronous: it must at least be terminating.
			awaitGone(t, func() error {
				_, err := c.Dynamic.Resource(crds).Get(ctx, gizmos.Name, metav1.GetOptions{})
				return err
			}, "CRD "+gizmos.Name)
		}
	})
}

// recordGizmo installs crd in c, creates Gizmo g1 in ns with spec.teeth, and records the
// resource's initial list; it returns the resource and the recording.
func recordGizmo(t *testing.T, c *testenv.Cluster, crd *apiextensionsv1.CustomResourceDefinition, ns string, teeth int64) (schema.GroupVersionResource, string) {
	t.Helper()
	ctx := context.Background()
	if err := c.InstallCRD(ctx, crd); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "gizmos"}
	g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": crd.Spec.Group + "/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"teeth": teeth}}}
	if _, err := c.Dynamic.Resource(gvr).Namespace(ns).Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "gizmos.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "gizmos."+crd.Spec.Group, "-n", ns, "-o", "json", "--record", rec)
	p.AwaitJSON(t, await, is("Synced", ""))
	_ = p.Signal(os.Interrupt)
	if code, err := p.Wait(); err != nil || code != 0 {
		t.Fatalf("recording: exit %d, %v", code, err)
	}
	return gvr, rec
}

// gizmoCRD is a namespaced CRD that only TestReenactBadInput installs, and deletes.
func gizmoCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := testenv.WidgetCRD()
	crd.Spec.Group = "reenact.e2e.example.com"
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"}
	crd.Name = "gizmos." + crd.Spec.Group
	crd.Spec.Versions[0].AdditionalPrinterColumns = nil
	return crd
}

// deleteCRD deletes a CRD and waits until the API server no longer serves its resource.
func deleteCRD(t *testing.T, c *testenv.Cluster, name string, gvr schema.GroupVersionResource) {
	t.Helper()
	cs, err := apiextensionsclient.NewForConfig(c.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, func() error {
		_, err := c.Dynamic.Resource(gvr).List(context.Background(), metav1.ListOptions{Limit: 1})
		return err
	}, "the resource "+gvr.String())
}

// awaitGone waits until get returns NotFound.
func awaitGone(t *testing.T, get func() error, what string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, await, true, func(context.Context) (bool, error) {
		return apierrors.IsNotFound(get()), nil
	})
	if err != nil {
		t.Fatalf("%s still there after %s", what, await)
	}
}

// mergedKubeconfig writes a kubeconfig holding each cluster as a context of the given name.
func mergedKubeconfig(t *testing.T, clusters map[string]*testenv.Cluster) string {
	t.Helper()
	out := clientcmdapi.NewConfig()
	for name, c := range clusters {
		cfg, err := clientcmd.LoadFromFile(c.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		kc := cfg.Contexts[cfg.CurrentContext]
		out.Clusters[name] = cfg.Clusters[kc.Cluster]
		out.AuthInfos[name] = cfg.AuthInfos[kc.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// A CRD the target lacks is copied from the source cluster (--crds-from-context): its own schema
// and columns, not one made from the recording. Source: the real control plane; target: the
// shared cluster.
func TestReenactCRDFromSource(t *testing.T) {
	ctx := context.Background()
	src, dst := realControlPlane(t), cluster
	crd := gizmoCRD()
	crd.Spec.Group = "source.e2e.example.com"
	crd.Name = "gizmos." + crd.Spec.Group
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["teeth"] = apiextensionsv1.JSONSchemaProps{Type: "integer"}
	ns := newNamespace(t, src)
	gvr, rec := recordGizmo(t, src, crd, ns, 7)
	kc := mergedKubeconfig(t, map[string]*testenv.Cluster{"source": src, "target": dst})
	r := dst.RunPluginAs(t, ctx, kc, "reenact", rec, "--context", "target", "--crds-from-context", "source", "--name", "from-source", "--settle", "1s", "-o", "json")
	if code, err := r.Wait(); err != nil || code != 0 {
		t.Fatalf("exit %d, %v; stderr:\n%s", code, err, r.Stderr())
	}
	if !strings.Contains(r.Stderr(), "reenact: created CRD "+crd.Name+" from the source cluster") {
		t.Errorf("stderr: %s", r.Stderr())
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	got, err := dst.Dynamic.Resource(crds).Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(got.Object, "spec", "versions")
	teeth, _, _ := unstructured.NestedString(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "teeth", "type")
	if teeth != "integer" || got.GetLabels()[reenactLabel] != "from-source" {
		t.Errorf("the target's CRD is not the source's (spec.teeth %q, labels %v)", teeth, got.GetLabels())
	}
	if _, err := dst.Dynamic.Resource(gvr).Namespace(ns+"-from-source").Get(ctx, "g1", metav1.GetOptions{}); err != nil {
		t.Errorf("the reenacted Gizmo: %v", err)
	}
	cl := dst.RunPluginAs(t, ctx, kc, "reenact", rec, "--context", "target", "--cleanup", "--name", "from-source")
	if code, err := cl.Wait(); err != nil || code != 0 {
		t.Fatalf("--cleanup: exit %d, %v; stderr:\n%s", code, err, cl.Stderr())
	}
}

// The operator's fight with kube-controller-manager over its ReplicaSet's replicas, recorded,
// then reenacted without either fighter's writes while both run against the reenactment (the
// operator with its bug, the deployment controller as always): the fight comes back, on the
// ReplicaSet of the same name, between the same managers.
func TestReenactFight(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	kctx := kubeContext(t, c)
	ns := newNamespace(t, c)
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "fight.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "widgets,replicasets", "-n", ns, "-o", "json", "--record", rec)
	p.AwaitJSON(t, await, is("Synced", ""))
	createWidget(t, c, ns, "fought", "fight", 1)
	orig := awaitSeen(t, p, 2*await, "the recorded fight", func(m map[string]any) bool {
		return m["type"] == "HotLoop" && m["resource"] == "replicasets"
	})
	_ = p.Signal(os.Interrupt)
	if code, err := p.Wait(); err != nil || code != 0 {
		t.Fatalf("recording: exit %d, %v", code, err)
	}
	_ = op.Stop()

	nsF := ns + "-f"
	op2, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: nsF})
	if err != nil {
		t.Fatal(err)
	}
	defer op2.Stop()
	r := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--namespace-map", ns+"="+nsF,
		"--skip-manager", testenv.OperatorName, "--skip-manager", "kube-controller-manager", "-o", "json", "--follow")
	hot := awaitSeen(t, r, 2*await, "the reenacted fight", func(m map[string]any) bool {
		return m["type"] == "HotLoop" && m["resource"] == "replicasets" && m["namespace"] == nsF
	})
	for _, f := range []string{"name", "loop", "reason"} {
		if fmt.Sprint(hot[f]) != fmt.Sprint(orig[f]) {
			t.Errorf("reenacted fight %s = %v, the recorded one's %v", f, hot[f], orig[f])
		}
	}
	// The field fought over; which status fields flip with it depends on the fight's pace
	// (seen: status.replicas and status.observedGeneration in one run and not the next).
	for _, h := range []map[string]any{orig, hot} {
		if !strings.Contains(fmt.Sprint(h["fields"]), "spec.replicas") {
			t.Errorf("fight fields %v, want spec.replicas", h["fields"])
		}
	}
	if ms := fmt.Sprint(hot["managers"]); !strings.Contains(ms, "kube-controller-manager") || !strings.Contains(ms, testenv.OperatorName) {
		t.Errorf("reenacted fight managers %s, want kube-controller-manager and %s", ms, testenv.OperatorName)
	}
	_ = r.Signal(os.Interrupt)
	if code, err := r.Wait(); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	t.Logf("reenact of the fight, stderr:\n%s", r.Stderr())
}
