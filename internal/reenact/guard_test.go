package reenact

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	configmaps = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	namespaces = discovery.Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace"}
	crbs       = discovery.Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings", Kind: "ClusterRoleBinding"}
	crs        = discovery.Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Kind: "ClusterRole"}
	rolebs     = discovery.Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings", Kind: "RoleBinding", Namespaced: true}
	webhooks   = discovery.Resource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration"}
)

// obj is a recorded object of r; ns "" for a cluster-scoped one.
func obj(r discovery.Resource, ns, name string, labels map[string]any) *unstructured.Unstructured {
	apiVersion := r.Version
	if r.Group != "" {
		apiVersion = r.Group + "/" + r.Version
	}
	md := map[string]any{"name": name, "uid": "u-" + name, "resourceVersion": "1"}
	if ns != "" {
		md["namespace"] = ns
	}
	if labels != nil {
		md["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": r.Kind, "metadata": md}}
}

// hostileEvents is the recording of HOSTILE-CASES-2.md's F1 (gen_reenact.py): the real
// cluster-admin binding and kube-system in the initial list, then a new binding to
// cluster-admin, a patch of the real one, a label on kube-system, and deletes of a namespace
// and a ClusterRole the reenactment never made.
func hostileEvents() []watch.Event {
	admin := obj(crbs, "", "cluster-admin", nil)
	admin2 := admin.DeepCopy()
	admin2.Object["subjects"] = []any{map[string]any{"kind": "User", "name": "mallory2"}}
	ks := obj(namespaces, "", "kube-system", nil)
	ks2 := obj(namespaces, "", "kube-system", map[string]any{"pwned": "by-reenact"})
	ev := func(typ watch.Type, r discovery.Resource, o, old *unstructured.Unstructured, initial bool) watch.Event {
		return watch.Event{Type: typ, Time: at(1), Resource: r, Name: o.GetName(), ResourceVersion: "2", Obj: watch.ObjectInfo{OldResourceVersion: "1", InitialList: initial, Object: o, OldObject: old}}
	}
	return []watch.Event{
		ev(watch.Added, crbs, admin, nil, true),
		ev(watch.Added, namespaces, ks, nil, true),
		{Type: watch.Synced, Time: at(1), Resource: crbs},
		ev(watch.Added, crbs, obj(crbs, "", "evil-admin", nil), nil, false),
		ev(watch.Updated, crbs, admin2, admin, false),
		ev(watch.Updated, namespaces, ks2, ks, false),
		ev(watch.Deleted, namespaces, obj(namespaces, "", "victim", nil), nil, false),
		ev(watch.Deleted, crs, obj(crs, "", "precious", nil), nil, false),
	}
}

// guardTarget is a cluster that serves configmaps, namespaces and RBAC, holding objs.
func guardTarget(objs ...runtime.Object) (*Clients, *dynamicfake.FakeDynamicClient) {
	kinds := map[schema.GroupVersionResource]string{crdGVR: "CustomResourceDefinitionList"}
	var core, rbac []metav1.APIResource
	for _, r := range []discovery.Resource{configmaps, namespaces, crbs, crs, rolebs} {
		kinds[r.GVR()] = r.Kind + "List"
		ar := metav1.APIResource{Name: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced}
		if r.Group == "" {
			core = append(core, ar)
		} else {
			rbac = append(rbac, ar)
		}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: core}, {GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: rbac},
	}}}
	return &Clients{Dynamic: dyn, Discovery: disc}, dyn
}

// writes are the fake's actions that are not reads.
func writes(dyn *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range dyn.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			out = append(out, v+" "+a.GetResource().Resource+" "+a.GetNamespace())
		}
	}
	return out
}

// What a recording may make reenact write, whatever the target holds: no cluster-scoped object
// unless --allow-cluster-scoped names it, no RBAC, admission, CRD or APIService without
// --allow-privileged-kinds (namespaced or not), never a protected namespace.
func TestRefusal(t *testing.T) {
	step := func(r discovery.Resource, ns, name string) *Step {
		return &Step{Op: OpCreate, Resource: r, Namespace: ns, Name: name}
	}
	tests := []struct {
		name       string
		step       *Step
		namespaced bool
		cfg        Config
		want       string // a part of the refusal; "" when allowed
	}{
		{"a namespaced object", step(configmaps, "demo", "a"), true, Config{}, ""},
		{"cluster-scoped", step(crs, "", "precious"), false, Config{AllowPrivileged: true}, "cluster-scoped: --allow-cluster-scoped=clusterroles allows it"},
		{"cluster-scoped, named by resource", step(crs, "", "precious"), false, Config{AllowPrivileged: true, AllowClusterScoped: []string{"clusterroles"}}, ""},
		{"cluster-scoped, named by kind", step(crs, "", "precious"), false, Config{AllowPrivileged: true, AllowClusterScoped: []string{"ClusterRole"}}, ""},
		{"cluster-scoped, named by resource.group", step(crs, "", "precious"), false, Config{AllowPrivileged: true, AllowClusterScoped: []string{"clusterroles.rbac.authorization.k8s.io"}}, ""},
		{"cluster-scoped, another named", step(namespaces, "", "x"), false, Config{AllowClusterScoped: []string{"clusterroles"}}, "--allow-cluster-scoped=namespaces"},
		{"the recording's scope is not trusted", step(configmaps, "", "a"), false, Config{}, "cluster-scoped"},
		{"namespaced without a namespace", step(configmaps, "", "a"), true, Config{}, "recorded without a namespace"},
		{"RBAC, namespaced", step(rolebs, "demo", "admin"), true, Config{}, "privileged kind"},
		{"RBAC, allowed", step(rolebs, "demo", "admin"), true, Config{AllowPrivileged: true}, ""},
		{"RBAC, cluster-scoped", step(crbs, "", "evil"), false, Config{}, "cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterrolebindings and --allow-privileged-kinds allows it"},
		{"a webhook", step(webhooks, "", "w"), false, Config{AllowClusterScoped: []string{"mutatingwebhookconfigurations"}}, "privileged kind"},
		{"kube-system's Namespace, whatever the flags", step(namespaces, "", "kube-system"), false, Config{AllowClusterScoped: []string{"namespaces"}, AllowPrivileged: true}, "namespace kube-system is never written"},
		{"default's Namespace", step(namespaces, "", "default"), false, Config{AllowClusterScoped: []string{"namespaces"}}, "never written"},
		{"another Namespace, allowed", step(namespaces, "", "scratch"), false, Config{AllowClusterScoped: []string{"namespaces"}}, ""},
		{"into kube-public", step(configmaps, "demo", "a"), true, Config{NamespaceMap: map[string]string{"demo": "kube-public"}}, "namespace kube-public is never written"},
		{"into kube-node-lease", step(configmaps, "kube", "a"), true, Config{Name: "node-lease"}, "namespace kube-node-lease is never written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.Name == "" {
				cfg.Name = "r1"
			}
			got := cfg.refusal(tt.step, tt.namespaced)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("refusal %q, want %q", got, tt.want)
			}
		})
	}
}

// F1 of the second hostile run: the recording that granted cluster-admin, patched the real
// binding, labelled kube-system and deleted what reenact never made writes nothing at all,
// initial list included; each refusal is one line, before anything is written, and counted.
func TestPlayRefusesTheHostileRecording(t *testing.T) {
	c, dyn := guardTarget(obj(crbs, "", "cluster-admin", nil), obj(namespaces, "", "kube-system", nil),
		obj(namespaces, "", "victim", nil), obj(crs, "", "precious", nil))
	var log bytes.Buffer
	cfg := &Config{Name: "r1", Log: &log}
	plan := NewPlan(hostileEvents())
	if len(plan.Initial) != 2 || len(plan.Steps) != 5 {
		t.Fatalf("plan of %d initial objects and %d steps, want 2 and 5", len(plan.Initial), len(plan.Steps))
	}
	r, err := Prepare(context.Background(), c, cfg, plan)
	if err != nil {
		t.Fatal(err)
	}
	stated := strings.Count(log.String(), "reenact: refused ")
	stats, err := r.Play(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := writes(dyn); len(w) > 0 {
		t.Errorf("writes %v, want none", w)
	}
	if stats.Refused != 7 || stated != 7 {
		t.Errorf("refused %d, stated before playing %d; want 7, 7:\n%s", stats.Refused, stated, log.String())
	}
	for _, want := range []string{
		"reenact: refused create clusterrolebindings.rbac.authorization.k8s.io cluster-admin as kubectl-informer-reenact: cluster-scoped and a privileged kind",
		"reenact: refused update namespaces kube-system as kubectl-informer-reenact: namespace kube-system is never written",
		"reenact: refused delete clusterroles.rbac.authorization.k8s.io precious: cluster-scoped",
		"reenact: refused 7 recorded writes (each stated above)",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, log.String())
		}
	}
}

// An object the reenactment did not create is never updated or deleted, even where every flag
// allows its kind: its label is read on the server before each write.
func TestPlayRefusesWhatItDidNotCreate(t *testing.T) {
	mine := obj(crs, "", "mine", map[string]any{Label: "r1"})
	other := obj(crs, "", "precious", map[string]any{Label: "r2"})
	cm := obj(configmaps, "repro", "keep", nil)
	c, dyn := guardTarget(mine, other, cm, obj(namespaces, "", "repro", nil))
	var log bytes.Buffer
	cfg := &Config{Name: "r1", Log: &log, AllowClusterScoped: []string{"clusterroles"}, AllowPrivileged: true, IntoExisting: true, NamespaceMap: map[string]string{"demo": "repro"}}
	changed := func(o *unstructured.Unstructured) *unstructured.Unstructured {
		n := o.DeepCopy()
		n.Object["rules"] = []any{map[string]any{"verbs": []any{"*"}}}
		return n
	}
	cmRec := obj(configmaps, "demo", "keep", nil)
	cmNew := cmRec.DeepCopy()
	cmNew.Object["data"] = map[string]any{"a": "b"}
	ev := func(typ watch.Type, r discovery.Resource, o, old *unstructured.Unstructured) watch.Event {
		return watch.Event{Type: typ, Time: at(1), Resource: r, Namespace: o.GetNamespace(), Name: o.GetName(), ResourceVersion: "2", Obj: watch.ObjectInfo{OldResourceVersion: "1", Object: o, OldObject: old}}
	}
	plan := NewPlan([]watch.Event{
		{Type: watch.Synced, Time: at(1), Resource: crs},
		ev(watch.Updated, crs, changed(mine), mine),
		ev(watch.Updated, crs, changed(other), other),
		ev(watch.Updated, configmaps, cmNew, cmRec),
		ev(watch.Deleted, configmaps, cmRec, nil),
		ev(watch.Deleted, crs, other, nil),
		ev(watch.Deleted, crs, mine, nil),
	})
	r, err := Prepare(context.Background(), c, cfg, plan)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := r.Play(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"patch clusterroles ", "delete clusterroles "}
	if d := cmp.Diff(want, writes(dyn)); d != "" {
		t.Errorf("writes (-want +got):\n%s\n%s", d, log.String())
	}
	if stats.Refused != 4 || stats.Updated != 1 || stats.Deleted != 1 {
		t.Errorf("stats %+v, want 4 refused, 1 update, 1 delete", stats)
	}
	if n := strings.Count(log.String(), "not created by this reenactment (the object on the server does not carry "+Label+"=r1)"); n != 4 {
		t.Errorf("%d refusals stated, want 4:\n%s", n, log.String())
	}
}

// --cleanup deletes only what carries the reenactment's label: never an unlabelled object of
// the same resources, never a protected namespace someone labelled.
func TestCleanupDeletesOnlyLabelled(t *testing.T) {
	l := map[string]any{Label: "r1"}
	c, dyn := guardTarget(
		obj(configmaps, "repro", "mine", l), obj(configmaps, "repro", "keep", nil),
		obj(crs, "", "mine", l), obj(crs, "", "precious", nil), obj(crs, "", "theirs", map[string]any{Label: "r2"}),
		obj(namespaces, "", "repro", l), obj(namespaces, "", "victim", nil), obj(namespaces, "", "kube-system", l),
	)
	plan := &Plan{Resources: []discovery.Resource{configmaps, crs, namespaces}}
	n, err := Cleanup(context.Background(), c, plan, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range dyn.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			deleted = append(deleted, d.Resource.Resource+" "+d.Namespace+"/"+d.Name)
		}
	}
	want := []string{"configmaps repro/mine", "clusterroles /mine", "namespaces /repro"}
	if d := cmp.Diff(want, deleted); d != "" || n != 3 {
		t.Errorf("deleted %d (-want +got):\n%s", n, d)
	}
}

// A dry run prints each write it would make and each it refuses, and writes nothing.
func TestDryRun(t *testing.T) {
	c, dyn := guardTarget(obj(crbs, "", "cluster-admin", nil), obj(crs, "", "precious", nil))
	events := append(hostileEvents(), watch.Event{
		Type:            watch.Added,
		Time:            at(2),
		Resource:        configmaps,
		Namespace:       "demo",
		Name:            "a\x1b]0;x\a",
		ResourceVersion: "3",
		Obj:             watch.ObjectInfo{Object: obj(configmaps, "demo", "a", nil)},
	})
	var out, log bytes.Buffer
	cfg := &Config{Name: "r1", Log: &log}
	if err := DryRun(context.Background(), c, cfg, NewPlan(events), &out); err != nil {
		t.Fatal(err)
	}
	if w := writes(dyn); len(w) > 0 {
		t.Errorf("writes %v, want none", w)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"create namespaces demo-r1",
		"refuse create clusterrolebindings.rbac.authorization.k8s.io cluster-admin as kubectl-informer-reenact: cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterrolebindings and --allow-privileged-kinds allows it",
		"refuse create namespaces kube-system as kubectl-informer-reenact: namespace kube-system is never written",
		"refuse create clusterrolebindings.rbac.authorization.k8s.io evil-admin as kubectl-informer-reenact: cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterrolebindings and --allow-privileged-kinds allows it",
		"refuse update clusterrolebindings.rbac.authorization.k8s.io cluster-admin as kubectl-informer-reenact: cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterrolebindings and --allow-privileged-kinds allows it",
		"refuse update namespaces kube-system as kubectl-informer-reenact: namespace kube-system is never written",
		"refuse delete namespaces victim: cluster-scoped: --allow-cluster-scoped=namespaces allows it",
		"refuse delete clusterroles.rbac.authorization.k8s.io precious: cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterroles and --allow-privileged-kinds allows it",
		`create configmaps demo-r1/a^[]0;x\x07 as kubectl-informer-reenact`,
		"reenact (dry run): 1 writes, 0 left out (--skip-manager), 7 refused, 0 not written (the target has it already, or not at all); nothing was written",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}

	// Allowed kinds: the new binding is planned; the real one is not written (it exists), and
	// neither it nor the ClusterRole is changed (not the reenactment's).
	out.Reset()
	cfg = &Config{Name: "r1", Log: &log, AllowClusterScoped: []string{"clusterroles", "clusterrolebindings"}, AllowPrivileged: true}
	if err := DryRun(context.Background(), c, cfg, NewPlan(hostileEvents()), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"skip create clusterrolebindings.rbac.authorization.k8s.io cluster-admin as kubectl-informer-reenact: the target has it already (not written)\n",
		"\ncreate clusterrolebindings.rbac.authorization.k8s.io evil-admin as kubectl-informer-reenact\n",
		"\nrefuse update clusterrolebindings.rbac.authorization.k8s.io cluster-admin as kubectl-informer-reenact: not created by this reenactment",
		"\nrefuse delete clusterroles.rbac.authorization.k8s.io precious: not created by this reenactment",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}
