package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// --metadata-only: the metadata client (PartialObjectMetadata, protobuf) feeds the same
// machinery; objects carry apiVersion, kind and metadata only, resourceVersions exact.
func TestMetadataOnly(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	pre := createConfigMaps(t, cluster.Clientset, ns, "a")
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--metadata-only")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	wantField(t, info, "metadataOnly", true)
	a := p.AwaitJSON(t, await, is("Added", "a"))
	wantField(t, a, "resourceVersion", pre["a"].ResourceVersion)
	obj := a["object"].(map[string]any)
	if obj["kind"] != "ConfigMap" || obj["apiVersion"] != "v1" {
		t.Errorf("object type: %v %v", obj["apiVersion"], obj["kind"])
	}
	if _, ok := obj["data"]; ok {
		t.Errorf("metadata-only object has data: %v", obj)
	}
	if obj["metadata"].(map[string]any)["uid"] != string(pre["a"].UID) {
		t.Errorf("metadata lost: %v", obj["metadata"])
	}
	p.AwaitJSON(t, await, is("Synced", ""))
	patched, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "a", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"tier":"x"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := p.AwaitJSON(t, await, is("Updated", "a"))
	wantField(t, u, "resourceVersion", patched.ResourceVersion)
	wantField(t, u, "oldResourceVersion", pre["a"].ResourceVersion)
	if u["object"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)["tier"] != "x" {
		t.Errorf("label change not seen: %v", u["object"])
	}
}

// --drop-managed-fields: the informer's transform removes managedFields before caching; the
// header says manager attribution is off.
func TestDropManagedFields(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	pre := createConfigMaps(t, cluster.Clientset, ns, "a")
	if len(pre["a"].ManagedFields) == 0 {
		t.Fatal("the server set no managedFields: nothing to drop")
	}
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--drop-managed-fields")
	wantField(t, p.AwaitJSON(t, await, is("Informer", "")), "dropManagedFields", true)
	a := p.AwaitJSON(t, await, is("Added", "a"))
	wantField(t, a, "resourceVersion", pre["a"].ResourceVersion)
	if _, ok := a["object"].(map[string]any)["metadata"].(map[string]any)["managedFields"]; ok {
		t.Errorf("managedFields still there: %v", a["object"])
	}
}
