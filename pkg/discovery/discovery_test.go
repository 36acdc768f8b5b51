package discovery

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
)

var verbs = metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"}

func coreResources() []*metav1.APIResourceList {
	return []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", ShortNames: []string{"cm"}, Verbs: verbs},
			{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: verbs},
			{Name: "bindings", SingularName: "binding", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: verbs},
			{Name: "deployments/scale", Namespaced: true, Kind: "Scale", Verbs: metav1.Verbs{"get", "update"}},
		}},
	}
}

func widgets() *metav1.APIResourceList {
	return &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", ShortNames: []string{"wdg"}, Verbs: verbs},
	}}
}

// diskCache stands for the disk-cached discovery client (cli-runtime's), on a fake server: every
// call is a request (a read of the cache's files), recorded by the fake.
type diskCache struct{ *fakediscovery.FakeDiscovery }

func (diskCache) Fresh() bool { return true }
func (diskCache) Invalidate() {}

// newResolver builds the Resolver a command builds (NewResolver: kubectl's deferred discovery
// mapper and short-name expander, an in-memory layer under them), on a fake discovery server.
func newResolver(lists ...*metav1.APIResourceList) (*Resolver, *clienttesting.Fake) {
	fake := &clienttesting.Fake{Resources: lists}
	return NewResolver(diskCache{&fakediscovery.FakeDiscovery{Fake: fake}}, nil), fake
}

// A short name two resources claim resolves to one of them, as kubectl's does (which one
// follows the order the groups' resources were read in), and the expander's warning naming the
// other reaches warn instead of being dropped.
func TestNewResolverWarnsOfAmbiguousShortNames(t *testing.T) {
	gadgets := &metav1.APIResourceList{GroupVersion: "other.example.com/v1", APIResources: []metav1.APIResource{
		{Name: "gadgets", SingularName: "gadget", Namespaced: true, Kind: "Gadget", ShortNames: []string{"wdg"}, Verbs: verbs},
	}}
	fake := &clienttesting.Fake{Resources: append(coreResources(), widgets(), gadgets)}
	var warned []string
	r := NewResolver(diskCache{&fakediscovery.FakeDiscovery{Fake: fake}}, func(s string) { warned = append(warned, s) })
	got, err := r.Resolve("wdg")
	if err != nil {
		t.Fatal(err)
	}
	other := map[string]string{"widgets": "gadgets.other.example.com", "gadgets": "widgets.example.com"}[got.Resource]
	if other == "" || len(warned) != 1 || !strings.Contains(warned[0], `short name "wdg" could also match`) || !strings.Contains(warned[0], other) {
		t.Errorf("resolved %s, warned %q", got, warned)
	}
}

// The discovery cache is read once a run, whatever the arguments: each group's resources are
// asked for once, not once for the mapper and again for every short name the expander checks.
func TestNewResolverReadsDiscoveryOnce(t *testing.T) {
	reads := func(r *Resolver, fake *clienttesting.Fake) map[string]int {
		t.Helper()
		if _, err := r.ResolveList("deploy,cm,wdg,Deployment,configmaps.v1."); err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, a := range fake.Actions() {
			n[a.GetResource().Resource]++
		}
		return n
	}
	r, fake := newResolver(append(coreResources(), widgets())...)
	got := reads(r, fake)
	if got["resource"] != len(coreResources())+1 || got["group"] > 1 {
		t.Errorf("the groups' resources were asked for %d times (%d groups), the group list %d times: %v", got["resource"], len(coreResources())+1, got["group"], got)
	}
	// What the memory layer spares: the same mapper straight over the disk cache reads it again.
	fake = &clienttesting.Fake{Resources: append(coreResources(), widgets())}
	disk := diskCache{&fakediscovery.FakeDiscovery{Fake: fake}}
	direct := &Resolver{Mapper: restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(disk), disk, nil), Discovery: disk}
	if again := reads(direct, fake); again["resource"] <= got["resource"] {
		t.Errorf("without the memory layer the resources were asked for %d times, with it %d: the test shows nothing", again["resource"], got["resource"])
	}
}

func TestResolve(t *testing.T) {
	deploy := Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	cm := Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	widget := Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}
	ns := Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace"}
	tests := []struct {
		arg     string
		want    Resource
		wantErr string
	}{
		{arg: "deployments", want: deploy},
		{arg: "deployment", want: deploy},
		{arg: "deploy", want: deploy},
		{arg: "Deployment", want: deploy},
		{arg: "deployments.apps", want: deploy},
		{arg: "deployments.v1.apps", want: deploy},
		{arg: "Deployment.apps", want: deploy},
		{arg: "cm", want: cm},
		{arg: "configmaps", want: cm},
		{arg: "ns", want: ns},
		{arg: "widgets", want: widget},
		{arg: "wdg", want: widget},
		{arg: "Widget", want: widget},
		{arg: "widgets.example.com", want: widget},
		{arg: "foo", wantErr: `the server doesn't have a resource type "foo"`},
		{arg: "deploymnets", wantErr: `the server doesn't have a resource type "deploymnets"; did you mean "deployments"?`},
		{arg: "widgts", wantErr: `did you mean "widgets"?`},
		{arg: "bindings", wantErr: `resource "bindings" does not support list`},
		{arg: "", wantErr: "resource type must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			r, _ := newResolver(append(coreResources(), widgets())...)
			got, err := r.Resolve(tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve(%q) error = %v, want it to contain %q", tt.arg, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.arg, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve(%q) (-want +got):\n%s", tt.arg, diff)
			}
		})
	}
}

// A CRD installed after the discovery cache was filled must still resolve: the resolver
// invalidates once on a miss and tries again.
func TestResolveAfterCacheWasFilled(t *testing.T) {
	r, fake := newResolver(coreResources()...)
	if _, err := r.Resolve("deploy"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve("wdg"); err == nil {
		t.Fatal("wdg resolved before the CRD existed")
	}
	fake.Resources = append(fake.Resources, widgets())
	got, err := r.Resolve("wdg")
	if err != nil {
		t.Fatalf("after the CRD appeared: %v", err)
	}
	if got.Resource != "widgets" {
		t.Errorf("got %+v", got)
	}
}

func TestResolveList(t *testing.T) {
	r, _ := newResolver(coreResources()...)
	got, err := r.ResolveList("cm,configmaps,deploy")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range got {
		names = append(names, g.String())
	}
	if diff := cmp.Diff([]string{"configmaps", "deployments.apps"}, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := r.ResolveList("cm,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("want an error naming nope, got %v", err)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"deployments", "deploy", "configmaps", "cm", "pods"}
	tests := []struct{ in, want string }{
		{"deploymnet", "deployments"},
		{"configmap", "configmaps"},
		{"pod", "pods"},
		{"zzzzzzzz", ""},
		{"cm", ""}, // exact names are not suggestions
		{"xy", ""}, // two edits from "cm": any two letters are, for a short name
		{"cn", "cm"},
	}
	for _, tt := range tests {
		if got := closest(tt.in, names); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWatchableNames(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Verbs: []string{"list", "watch", "get"}},
			{Name: "pods/log", Verbs: []string{"get"}},
			{Name: "bindings", Verbs: []string{"create"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Verbs: []string{"list", "watch"}}}},
		nil,
	}
	if diff := cmp.Diff([]string{"configmaps", "deployments.apps"}, WatchableNames(lists)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Watchable keeps what can be listed and watched, once, without subresources.
func TestWatchable(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "list", "watch"}},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "list", "watch"}},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
			{Name: "nodes", Kind: "Node", Verbs: []string{"list", "watch"}},
		}},
		nil, // a group whose discovery failed
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: []string{"list", "watch"}}}},
		{GroupVersion: "apps/v1beta1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: []string{"list", "watch"}}}},
	}
	var got []string
	for _, r := range Watchable(lists) {
		got = append(got, r.String()+"/"+r.Version+"/"+r.Kind+"/"+strconv.FormatBool(r.Namespaced))
	}
	want := []string{"deployments.apps/v1/Deployment/true", "nodes/v1/Node/false", "pods/v1/Pod/true"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
