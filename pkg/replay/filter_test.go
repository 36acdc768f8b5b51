package replay

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	fcm   = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	fsec  = discovery.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	ft0   = time.Date(2026, 11, 21, 5, 30, 0, 0, time.UTC)
	fHot  = watch.Type("HotLoop")
	fObjs = []watch.Type{fHot}
)

func fobj(res discovery.Resource, ns, name, uid, app string, s int) watch.Event {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": ns, "name": name}}}
	u.SetUID(types.UID(uid))
	u.SetLabels(map[string]string{"app": app})
	return watch.Event{Type: watch.Added, Time: ft0.Add(time.Duration(s) * time.Second), Resource: res, Namespace: ns, Name: name, Obj: watch.ObjectInfo{Object: u}}
}

// filterEvents: objects in two namespaces, of two resources, with lines that carry no labels (a
// reconcile, an Event, a hot loop) and a line about no object.
func filterEvents() []watch.Event {
	at := func(s int) time.Time { return ft0.Add(time.Duration(s) * time.Second) }
	ev := &watch.KubeEventInfo{}
	ev.Regarding.Namespace, ev.Regarding.Name, ev.Regarding.UID = "demo", "web-1", "u1"
	return []watch.Event{
		{Type: watch.List, Time: at(0), Resource: fcm},
		fobj(fcm, "demo", "web-1", "u1", "web", 0),
		fobj(fcm, "other", "db", "u2", "db", 1),
		fobj(fsec, "demo", "token", "u3", "web", 2),
		{Type: watch.Reconciled, Time: at(3), Resource: fcm, Key: "demo/web-1"},
		{Type: watch.Reconciled, Time: at(3), Resource: fcm, Key: "other/db"},
		{Type: watch.KubeEvent, Time: at(4), Kube: ev},
		{Type: fHot, Time: at(5), Resource: fcm, Namespace: "other", Name: "db"},
	}
}

type kept struct {
	Type watch.Type
	Name string
}

func TestFilterKeep(t *testing.T) {
	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	bound := func(s string) Bound {
		b, err := ParseBound("--since", s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	all := []kept{{watch.List, ""}, {watch.Added, "web-1"}, {watch.Added, "db"}, {watch.Added, "token"},
		{watch.Reconciled, "demo/web-1"}, {watch.Reconciled, "other/db"}, {watch.KubeEvent, ""}, {fHot, "db"}}
	tests := []struct {
		name string
		f    Filter
		want []kept
	}{
		{name: "no filter", f: Filter{}, want: all},
		{name: "types", f: Filter{Types: map[watch.Type]bool{watch.Reconciled: true, fHot: true}},
			want: []kept{{watch.Reconciled, "demo/web-1"}, {watch.Reconciled, "other/db"}, {fHot, "db"}}},
		{name: "namespace: lines about no object stay", f: Filter{Namespace: "demo", ObjectTypes: fObjs},
			want: []kept{{watch.List, ""}, {watch.Added, "web-1"}, {watch.Added, "token"}, {watch.Reconciled, "demo/web-1"}, {watch.KubeEvent, ""}}},
		{name: "name pattern", f: Filter{Names: []string{"w*", "token"}, ObjectTypes: fObjs},
			want: []kept{{watch.List, ""}, {watch.Added, "web-1"}, {watch.Added, "token"}, {watch.Reconciled, "demo/web-1"}, {watch.KubeEvent, ""}}},
		{name: "selector: recorded labels for reconciles and Events", f: Filter{Selector: sel("app=db"), ObjectTypes: fObjs},
			want: []kept{{watch.List, ""}, {watch.Added, "db"}, {watch.Reconciled, "other/db"}, {fHot, "db"}}},
		{name: "without ObjectTypes a hot loop is about no object", f: Filter{Namespace: "demo"},
			want: []kept{{watch.List, ""}, {watch.Added, "web-1"}, {watch.Added, "token"}, {watch.Reconciled, "demo/web-1"}, {watch.KubeEvent, ""}, {fHot, "db"}}},
		{name: "resources", f: Filter{Resources: NewResourceFilter("secret")},
			want: []kept{{watch.Added, "token"}, {watch.KubeEvent, ""}}},
		{name: "since and until, relative to the first line, inclusive", f: Filter{Since: bound("1s"), Until: bound("3s")},
			want: []kept{{watch.Added, "db"}, {watch.Added, "token"}, {watch.Reconciled, "demo/web-1"}, {watch.Reconciled, "other/db"}}},
		{name: "until an absolute time", f: Filter{Until: bound("2026-11-21T05:30:00Z")},
			want: []kept{{watch.List, ""}, {watch.Added, "web-1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []kept
			for _, ev := range filterEvents() {
				tt.f.Observe(&ev)
				if tt.f.Keep(&ev) {
					name := ev.Name
					if ev.Type == watch.Reconciled {
						name = ev.Key
					}
					got = append(got, kept{ev.Type, name})
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

// A --resource the recording has no resource for is an error naming what it has.
func TestResourceFilterCheck(t *testing.T) {
	f := NewResourceFilter("deploy")
	if err := f.Learn([]discovery.Resource{fcm, fsec}, true); err == nil || err.Error() != `the recording has no resource type "deploy" (it has: configmaps, secrets)` {
		t.Errorf("Learn = %v", err)
	}
	if f = NewResourceFilter("cm"); f.Learn([]discovery.Resource{fcm}, true) != nil || !f.Matches(fcm) || f.Matches(fsec) {
		t.Error("cm does not match configmaps alone")
	}
}

func TestParseBound(t *testing.T) {
	first := time.Date(2026, 11, 21, 23, 50, 0, 0, time.Local)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-21T05:40:00Z", time.Date(2026, 11, 21, 5, 40, 0, 0, time.UTC)},
		{"2026-11-21T05:40:00.5+01:00", time.Date(2026, 11, 21, 4, 40, 0, 500000000, time.UTC)},
		{"90s", first.Add(90 * time.Second)},
		{"23:55:00", time.Date(2026, 11, 21, 23, 55, 0, 0, time.Local)},
		{"00:05", time.Date(2026, 11, 22, 0, 5, 0, 0, time.Local)}, // after midnight: the next day
		{"23:50:00.250", time.Date(2026, 11, 21, 23, 50, 0, 250000000, time.Local)},
	}
	for _, tt := range tests {
		b, err := ParseBound("--since", tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		b.Resolve(first)
		if !b.IsSet() || !b.At().Equal(tt.want) {
			t.Errorf("%s: %s, want %s", tt.in, b.At(), tt.want)
		}
	}
	for in, want := range map[string]string{
		"-1m":       "--until must be a time or a duration >= 0 after the recording's first event, got -1m",
		"yesterday": `--until "yesterday" is neither an RFC 3339 time (2026-11-21T05:30:00Z), a clock time (05:30:00) nor a duration (2m)`,
	} {
		if _, err := ParseBound("--until", in); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	if b, err := ParseBound("--since", " "); err != nil || b.IsSet() {
		t.Errorf("empty: %v, set %v", err, b.IsSet())
	}
}
