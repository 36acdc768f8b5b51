package discovery

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStaticResolver(t *testing.T) {
	cm := Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	pods := Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	events := Resource{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	newEvents := Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	deploy := Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	rs := Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	widget := Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}
	// A recording's resources, the events.k8s.io group before the core group.
	recorded := []Resource{deploy, rs, newEvents, cm, pods, events, widget}
	tests := []struct {
		arg     string
		want    Resource
		wantErr string
	}{
		{arg: "rs", want: rs},
		{arg: "RS", want: rs},
		{arg: "replicasets", want: rs},
		{arg: "replicaset", want: rs},
		{arg: "ReplicaSet", want: rs},
		{arg: "replicasets.apps", want: rs},
		{arg: "replicasets.v1.apps", want: rs},
		{arg: "ReplicaSet.apps", want: rs},
		{arg: "rs.apps", want: rs},
		{arg: "deploy", want: deploy},
		{arg: "Deployment", want: deploy},
		{arg: "po", want: pods},
		{arg: "pod", want: pods},
		{arg: "cm", want: cm},
		{arg: "configmaps", want: cm},
		{arg: "Widget", want: widget},
		{arg: "widget", want: widget},
		{arg: "widgets.example.com", want: widget},
		// The core group first, as on a server.
		{arg: "ev", want: events},
		{arg: "events", want: events},
		{arg: "events.events.k8s.io", want: newEvents},
		{arg: "ev.events.k8s.io", want: newEvents},
		{arg: "nosuch", wantErr: `the server doesn't have a resource type "nosuch"`},
		{arg: "sts", wantErr: `the server doesn't have a resource type "sts"`},
		{arg: "deployments.v2.apps", wantErr: `doesn't have a resource type "deployments"`},
		{arg: "deploymnets", wantErr: `did you mean "deployments"?`},
		{arg: "wdg", wantErr: `doesn't have a resource type "wdg"`}, // a custom resource's short names are not recorded
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := NewStaticResolver(recorded).Resolve(tt.arg)
			if tt.wantErr != "" {
				var nf *NotFoundError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &nf) {
					t.Fatalf("Resolve(%q) = %+v, %v; want a NotFoundError containing %q", tt.arg, got, err, tt.wantErr)
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

// A short name that is some recorded resource's own name is that resource, not the built-in one.
func TestStaticResolverPluralBeatsShortName(t *testing.T) {
	cm := Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	cmCRD := Resource{Group: "example.com", Version: "v1", Resource: "cm", Kind: "Cm", Namespaced: true}
	got, err := NewStaticResolver([]Resource{cm, cmCRD}).Resolve("cm")
	if err != nil {
		t.Fatal(err)
	}
	if got.GVR() != cmCRD.GVR() {
		t.Errorf("got %+v, want the resource named cm", got)
	}
}

func TestStaticResolverNoResources(t *testing.T) {
	_, err := NewStaticResolver(nil).Resolve("pods")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("got %v, want a NotFoundError", err)
	}
}
