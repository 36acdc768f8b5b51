package discovery

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func workloadResources() []*metav1.APIResourceList {
	return []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Verbs: verbs},
			{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", ShortNames: []string{"cm"}, Verbs: verbs},
			{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: verbs},
			{Name: "nodes", SingularName: "node", Kind: "Node", ShortNames: []string{"no"}, Verbs: verbs},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: verbs},
			{Name: "replicasets", SingularName: "replicaset", Namespaced: true, Kind: "ReplicaSet", ShortNames: []string{"rs"}, Verbs: verbs},
		}},
		widgets(),
	}
}

func names(rs []Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	return out
}

func TestResolveOwned(t *testing.T) {
	tests := []struct {
		name, roots  string
		extra        []string
		wantAll      []string
		wantChildren map[string][]string // kind → resources
		wantErr      string
	}{{
		name: "deployment: replicasets, then pods; controllerrevisions are not served here", roots: "deploy",
		wantAll:      []string{"replicasets.apps", "pods"},
		wantChildren: map[string][]string{"Deployment": {"replicasets.apps"}, "ReplicaSet": {"pods"}, "Pod": nil},
	}, {
		name: "a custom resource owns what --owned-resources names, and their children", roots: "widgets", extra: []string{"deploy", "cm"},
		wantAll: []string{"deployments.apps", "configmaps", "replicasets.apps", "pods"},
		wantChildren: map[string][]string{
			"Widget":     {"deployments.apps", "configmaps"},
			"Deployment": {"replicasets.apps", "configmaps"},
			"ConfigMap":  {"deployments.apps"},
			"ReplicaSet": {"pods", "deployments.apps", "configmaps"},
			"Pod":        {"deployments.apps", "configmaps"},
		},
	}, {
		name: "a root is not repeated below itself", roots: "deploy,rs", wantAll: []string{"pods"},
		wantChildren: map[string][]string{"Deployment": {"replicasets.apps"}, "ReplicaSet": {"pods"}, "Pod": nil},
	}, {
		name: "unknown extra", roots: "deploy", extra: []string{"gizmos"}, wantErr: `--owned-resources: the server doesn't have a resource type "gizmos"`,
	}, {
		name:  "a cluster-scoped owner owns cluster-scoped and namespaced objects; a namespaced one only namespaced objects",
		roots: "ns", extra: []string{"nodes", "cm"},
		wantAll:      []string{"nodes", "configmaps"},
		wantChildren: map[string][]string{"Namespace": {"nodes", "configmaps"}, "Node": {"configmaps"}, "ConfigMap": nil},
	}, {
		name: "cluster-scoped extra below namespaced roots only", roots: "deploy", extra: []string{"ns"},
		wantErr: "--owned-resources: namespaces is cluster-scoped, and only a cluster-scoped owner can own it (deployments.apps is namespaced)",
	}, {
		name: "cluster-scoped extras below namespaced roots own each other, but nothing of the tree owns them", roots: "deploy,cm", extra: []string{"ns", "nodes"},
		wantErr: "--owned-resources: namespaces is cluster-scoped, and only a cluster-scoped owner can own it (deployments.apps, configmaps are namespaced)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newResolver(workloadResources()...)
			roots, err := r.ResolveList(tt.roots)
			if err != nil {
				t.Fatal(err)
			}
			o, err := r.ResolveOwned(roots, tt.extra)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ResolveOwned() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantAll, names(o.Resources)); diff != "" {
				t.Errorf("Resources (-want +got):\n%s", diff)
			}
			got := map[string][]string{}
			for gk, kids := range o.Children {
				got[gk.Kind] = names(kids)
			}
			if diff := cmp.Diff(tt.wantChildren, got); diff != "" {
				t.Errorf("Children (-want +got):\n%s", diff)
			}
			if o.ChildrenOf(schema.GroupKind{Group: "apps", Kind: "Deployment"}) == nil && tt.roots == "deploy" {
				t.Error("ChildrenOf(Deployment) is empty")
			}
		})
	}
}
