package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// assertNothingWritten fails the test when one of namespaces exists, or a namespace or CRD
// carries the label of the reenactment "nothing".
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
	wantOneLine(t, c.RunPlugin(t, context.Background(), append([]string{"reenact"}, args...)...), want)
}

// wantOneLine wants p to exit 1, print nothing on stdout and one stderr line holding want.
func wantOneLine(t *testing.T, p *testenv.PluginRun, want string) {
	t.Helper()
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
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	c := cluster
	ctx := context.Background()
	kctx := kubeContext(t, c)
	ns := newNamespace(t, c)
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "w", Size: 1})
	rec := filepath.Join(t.TempDir(), "widgets.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--record", rec)
	p.AwaitJSON(t, await, is("Synced", ""))
	p.Stop(t)
	target := ns + "-x"
	mapping := ns + "=" + target

	t.Run("no context", func(t *testing.T) {
		runFails(t, c, "name its context with --context", rec, "--namespace-map", mapping, "--name", "nothing")
		assertNothingWritten(t, c, target)
	})
	t.Run("damaged", func(t *testing.T) {
		raw, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
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
	p.Stop(t)
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
	testenv.Eventually(t, await, what+" gone", func() (bool, error) { return apierrors.IsNotFound(get()), nil })
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
