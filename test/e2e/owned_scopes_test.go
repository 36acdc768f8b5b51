package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// An owner tree across scopes, as an operator that owns cluster-scoped claims builds it: a
// cluster-scoped Pool owns a cluster-scoped Claim, which owns a Node and a ConfigMap in a namespace.
// watch POOL --owned follows both levels (the ConfigMaps of every namespace, -n not given),
// each line with its chain from the Pool; a Claim that names a namespaced owner (which the
// garbage collector ignores) is not part of the tree.
func TestOwnedAcrossScopes(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	group := "scopes.example.com"
	for _, crd := range []struct{ plural, kind string }{{"pools", "Pool"}, {"claims", "Claim"}} {
		if err := cluster.InstallCRD(ctx, testenv.ClusterScopedCRD(group, crd.plural, crd.kind)); err != nil {
			t.Fatal(err)
		}
	}
	pools := cluster.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "pools"})
	claims := cluster.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "claims"})
	pool, claim, stray := "pool-"+ns, "claim-"+ns, "stray-"+ns
	p := cluster.RunPlugin(t, ctx, "watch", "pools", pool, "--owned", "--owned-resources", "claims,configmaps,nodes", "-o", "json")
	p.AwaitJSON(t, await, is("Synced", ""))

	create := func(c dynamic.ResourceInterface, kind, name string, owner *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": kind,
			"metadata": map[string]any{"name": name}}}
		if owner != nil {
			u.SetOwnerReferences([]metav1.OwnerReference{ownerRef(owner)})
		}
		got, err := c.Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		return got
	}
	po := create(pools, "Pool", pool, nil)
	cl := create(claims, "Claim", claim, po)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "of-claim", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{ownerRef(cl)}}}
	if _, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + ns, OwnerReferences: []metav1.OwnerReference{ownerRef(cl)}}}
	if _, err := cluster.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Clientset.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
	})
	// A namespaced owner of a cluster-scoped object: the ConfigMap is in the Pool's tree, but
	// the garbage collector does not take it as the stray Claim's owner, and neither does --owned.
	nsCM, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "of-claim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create(claims, "Claim", stray, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": nsCM.Name, "uid": string(nsCM.UID)}}})

	chainIs := func(want ...string) func(m map[string]any) bool {
		return func(m map[string]any) bool { return strings.Join(ownersChain(m), ">") == strings.Join(want, ">") }
	}
	awaitSeen(t, p, await, "the cluster-scoped Claim owned by the Pool", func(m map[string]any) bool {
		return m["type"] == "Added" && m["resource"] == "claims" && m["name"] == claim && chainIs("Pool/"+pool)(m)
	})
	awaitSeen(t, p, await, "the namespaced ConfigMap owned by the Claim, two owners deep", func(m map[string]any) bool {
		return m["type"] == "Added" && m["resource"] == "configmaps" && m["namespace"] == ns && m["name"] == "of-claim" &&
			chainIs("Pool/"+pool, "Claim/"+claim)(m)
	})
	awaitSeen(t, p, await, "the Node owned by the Claim, two owners deep", func(m map[string]any) bool {
		return m["type"] == "Added" && m["resource"] == "nodes" && m["name"] == "node-"+ns && chainIs("Pool/"+pool, "Claim/"+claim)(m)
	})
	// A later line of the tree, after the stray Claim's: it was never shown.
	if _, err := claims.Patch(ctx, claim, types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitSeen(t, p, await, "the Claim's update", func(m map[string]any) bool {
		return m["type"] == "Updated" && m["resource"] == "claims" && m["name"] == claim
	})
	p.Stop(t)
	if n := p.Count(func(m map[string]any) bool { return m["name"] == stray }); n != 0 {
		t.Errorf("%d lines of the Claim owned by a namespaced ConfigMap, want none:\n%s", n, strings.Join(p.Strings(), "\n"))
	}
}

// ownerRef is an ownerReference to o, as its controller.
func ownerRef(o interface {
	GetAPIVersion() string
	GetKind() string
	GetName() string
	GetUID() types.UID
}) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID(), Controller: &yes}
}
