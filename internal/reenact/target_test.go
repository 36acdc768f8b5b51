package reenact

import (
	"context"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// fakeTarget is a cluster that serves widgets (with their status subresource) when served, and
// has the namespaces named.
func fakeTarget(t *testing.T, served bool, namespaces ...string) (*Clients, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, ns := range namespaces {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{widgets.GVR(): "WidgetList"}, objs...)
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	if served {
		disc.Resources = []*metav1.APIResourceList{{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true}, {Name: "widgets/status", Kind: "Widget", Namespaced: true},
		}}}
	}
	return &Clients{Dynamic: dyn, Discovery: disc}, dyn
}

// The checks before any write: a namespace that exists is refused unless --into-existing, a
// protected one always, a resource the target lacks unless --create-crds; a refusal writes
// nothing.
func TestPrepare(t *testing.T) {
	plan := NewPlan(recordedEvents())
	tests := []struct {
		name       string
		served     bool
		existing   []string
		cfg        Config
		to         string // where demo goes; "repro" when empty
		wantErr    string
		wantCreate []string
		wantCRDs   int
	}{
		{name: "fresh", served: true, wantCreate: []string{"repro"}},
		{name: "namespace exists", served: true, existing: []string{"repro"}, wantErr: `namespace "repro" exists`},
		{name: "into existing", served: true, existing: []string{"repro"}, cfg: Config{IntoExisting: true}},
		{name: "resource missing", wantErr: `the server doesn't have a resource type "widgets.v1.example.com"`},
		{name: "crd from the recording", cfg: Config{CreateCRDs: true}, wantCreate: []string{"repro"}, wantCRDs: 1},
		{name: "kube-system, even into existing", served: true, existing: []string{"kube-system"}, to: "kube-system", cfg: Config{IntoExisting: true}, wantErr: `namespace "kube-system" is never written`},
		{name: "default, even into existing", served: true, existing: []string{"default"}, to: "default", cfg: Config{IntoExisting: true}, wantErr: `namespace "default" is never written`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, dyn := fakeTarget(t, tt.served, tt.existing...)
			cfg := tt.cfg
			to := tt.to
			if to == "" {
				to = "repro"
			}
			cfg.Name, cfg.NamespaceMap, cfg.Log = "r1", map[string]string{"demo": to}, io.Discard
			if tt.wantErr != "" {
				_, err := Prepare(context.Background(), c, &cfg, plan)
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "nothing was written") {
					t.Fatalf("err %v, want %q and that nothing was written", err, tt.wantErr)
				}
				for _, a := range dyn.Actions() {
					if a.GetVerb() != "get" && a.GetVerb() != "list" {
						t.Errorf("a write after a failed check: %v", a)
					}
				}
				return
			}
			tg, err := prepare(context.Background(), c, &cfg, plan) // the checks, without the CRDs' wait
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(tg.create, ",") != strings.Join(tt.wantCreate, ",") || len(tg.crds) != tt.wantCRDs {
				t.Errorf("namespaces to create %v, CRDs %d; want %v, %d", tg.create, len(tg.crds), tt.wantCreate, tt.wantCRDs)
			}
			if !tg.status[widgets.GVR()] {
				t.Error("widgets have a status subresource (served, or recorded status writes)")
			}
		})
	}
}

// A CRD the target lacks is the source cluster's (its spec, less a conversion webhook), when a
// source is given.
func TestPrepareCRDFromSource(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com", "uid": "src-uid", "resourceVersion": "9"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"conversion": map[string]any{"strategy": "Webhook"},
			"versions":   []any{map[string]any{"name": "v1", "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "description": "the source's"}}}}},
	}}
	src := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{crdGVR: "CustomResourceDefinitionList"}, crd)
	c, _ := fakeTarget(t, false)
	cfg := &Config{Name: "r1", Log: io.Discard, CRDSource: src}
	tg, err := prepare(context.Background(), c, cfg, NewPlan(recordedEvents()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.copied) != 1 || tg.copied[0] == nil {
		t.Fatalf("copied %v", tg.copied)
	}
	got := tg.copied[0]
	if _, has, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "conversion"); has {
		t.Error("the source's conversion webhook was kept")
	}
	if got.GetUID() != "" || got.GetResourceVersion() != "" || got.GetLabels()[Label] != "r1" {
		t.Errorf("metadata %v", got.Object["metadata"])
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(crd.Object, "spec", "conversion"); !has {
		t.Error("the source's object was changed")
	}
	vs, _, _ := unstructured.NestedSlice(got.Object, "spec", "versions")
	if d, _, _ := unstructured.NestedString(vs[0].(map[string]any), "schema", "openAPIV3Schema", "description"); d != "the source's" {
		t.Errorf("schema not the source's: %v", vs)
	}
}
