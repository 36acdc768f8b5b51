package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
)

// An object of about 1 MiB goes through whole, in JSON and in human output.
func TestHugeObject(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	big := strings.Repeat("x", 1000*1024)
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json")
	p.AwaitJSON(t, await, is("Synced", ""))
	cm, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"blob": big}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := p.AwaitJSON(t, await, is("Added", "big"))
	wantField(t, a, "resourceVersion", cm.ResourceVersion)
	if got := a["object"].(map[string]any)["data"].(map[string]any)["blob"].(string); len(got) != len(big) {
		t.Errorf("blob of %d bytes arrived as %d", len(big), len(got))
	}
	// The human line is awaited, not expected within a --timeout: a loaded machine is slow.
	human := cluster.RunPlugin(t, ctx, "watch", "cm", "big", "-n", ns, "--color", "never")
	awaitLine(t, human, ns+"/big  rv="+cm.ResourceVersion)
	human.Stop(t)
}

// Twenty resources at once, from one command line: every one lists, syncs and streams.
func TestTwentyResources(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	resources := []string{"cm", "secrets", "deploy", "rs", "sts", "ds", "jobs", "cronjobs", "pods", "svc",
		"sa", "roles", "rolebindings", "endpointslices", "ingresses", "networkpolicies", "pdb", "hpa", "leases", "wdg"}
	p := cluster.RunPlugin(t, ctx, "watch", strings.Join(resources, ","), "-n", ns, "-o", "json")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	if n := len(info["resources"].([]any)); n != len(resources) {
		t.Fatalf("Informer names %d resources, want %d", n, len(resources))
	}
	synced := map[string]bool{}
	for len(synced) < len(resources) {
		s := p.AwaitJSON(t, await, is("Synced", ""))
		synced[s["resource"].(string)] = true
	}
	createConfigMaps(t, cluster.Clientset, ns, "one")
	p.AwaitJSON(t, await, is("Added", "one"))
	cluster.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "w", Size: 2})
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Added" && m["kind"] == "Widget" })
}

// A CRD with several versions (v1 served and stored, v2beta1 served, v1alpha1 not served) and an
// unusual schema: resolution picks the preferred version, and qualified names pick others.
func TestManyVersionCRD(t *testing.T) {
	ctx := context.Background()
	preserve := true
	schemaProps := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: &preserve,
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", XPreserveUnknownFields: &preserve, Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"any":  {XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
				"list": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}},
			}},
		},
	}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.multi.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "multi.example.com", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList", ShortNames: []string{"gz"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schemaProps},
				{Name: "v2beta1", Served: true, Schema: schemaProps},
				{Name: "v1alpha1", Served: false, Schema: schemaProps},
			},
		},
	}
	if err := cluster.InstallCRD(ctx, crd); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "multi.example.com", Version: "v1", Resource: "gizmos"}
	name := fmt.Sprintf("g-%d", nsCounter.Add(1))
	g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "multi.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"any": "x", "list": []any{map[string]any{"odd": []any{nil, true, 1.5}}}}}}
	created, err := cluster.Dynamic.Resource(gvr).Create(ctx, g, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cluster.Dynamic.Resource(gvr).Delete(ctx, name, metav1.DeleteOptions{}) }()
	for arg, version := range map[string]string{"gz": "v1", "gizmos.v2beta1.multi.example.com": "v2beta1", "Gizmo": "v1"} {
		p := cluster.RunPlugin(t, ctx, "watch", arg, name, "-o", "json")
		p.AwaitJSON(t, await, is("Synced", ""))
		p.Stop(t)
		stdout := strings.Join(p.Strings(), "\n")
		if !strings.Contains(stdout, `"version":"`+version+`","resource":"gizmos"`) ||
			!strings.Contains(stdout, `"name":"`+name+`","resourceVersion":"`+created.GetResourceVersion()+`"`) {
			t.Errorf("%s: want version %s and the gizmo:\n%s", arg, version, stdout)
		}
	}
	r := runPlugin(t, cluster, "watch", "gizmos.v1alpha1.multi.example.com")
	if r.code != 1 || !strings.Contains(r.stderr, "error: ") {
		t.Errorf("an unserved version: exit %d, %q", r.code, r.stderr)
	}
}

// A resource that can be listed but not watched is refused before anything starts.
func TestListButNotWatch(t *testing.T) {
	r := runPlugin(t, cluster, "watch", "componentstatuses")
	if r.code != 1 || !strings.Contains(r.stderr, `does not support watch`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// No bearer token or client key reaches any output, at any -v level.
func TestNoCredentialsInOutput(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	ns := newNamespace(t, cluster)
	const token = "s3cr3t-bearer-token-for-the-test"
	raw, err := clientcmd.LoadFromFile(cluster.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var keyData []byte
	for _, a := range raw.AuthInfos {
		keyData = a.ClientKeyData
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, mustRead(t, cluster.KubeconfigPath), 0o600); err != nil {
		t.Fatal(err)
	}
	keyLine := strings.Split(strings.TrimSpace(string(keyData)), "\n")[1] // a line of the PEM body
	for _, v := range []string{"0", "4", "6", "9", "10"} {
		r := runPlugin(t, cluster, "watch", "cm", "-n", ns, "--kubeconfig", kc, "--token", token, "-v", v, "--timeout", "2s", "-o", "json")
		all := r.stdout + r.stderr
		if strings.Contains(all, token) {
			t.Errorf("-v %s: the bearer token is in the output", v)
		}
		if strings.Contains(all, keyLine) {
			t.Errorf("-v %s: the client key is in the output", v)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
