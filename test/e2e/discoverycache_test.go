package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A CRD installed after kubectl's on-disk discovery cache was written (the cache lives for
// hours) still resolves: a miss invalidates the cache once and asks the server again.
func TestResolveAfterDiskCacheWasFilled(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	if r := runPlugin(t, cluster, "watch", "cm", "-n", ns, "-o", "json", "--timeout", "1s"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The plugin keeps discovery where kubectl does (KUBECACHEDIR): the cache is on disk now.
	groups, _ := filepath.Glob(filepath.Join(cluster.Dir, "kubectl-cache", "discovery", "*", "servergroups.json"))
	if len(groups) == 0 {
		t.Fatalf("no on-disk discovery cache under %s", filepath.Join(cluster.Dir, "kubectl-cache"))
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "sprockets.late.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "late.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "sprockets", Singular: "sprocket", Kind: "Sprocket", ListKind: "SprocketList", ShortNames: []string{"spk"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
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
	// A run, not a --timeout: how long the first list takes is not this test's business.
	p := cluster.RunPlugin(t, ctx, "watch", "spk", "-n", ns, "-o", "json")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	if want := "[map[group:late.example.com kind:Sprocket namespaced:true resource:sprockets version:v1]]"; fmt.Sprint(info["resources"]) != want {
		t.Errorf("the CRD installed after the cache was written is not what is watched: %v", info["resources"])
	}
	p.AwaitJSON(t, await, is("Synced", ""))
}
