package watchrun

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// The informers list the watch's namespace, except that what cluster-scoped roots own (and the
// Events about them) is followed in every namespace unless -n names one.
func TestInformerNamespace(t *testing.T) {
	pools := discovery.Resource{Group: "example.com", Version: "v1", Resource: "pools", Kind: "Pool"}
	deploy := discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	owned := &discovery.Owned{}
	tests := []struct {
		name   string
		roots  []discovery.Resource
		owned  *discovery.Owned
		events bool
		flagNS string
		want   string
	}{
		{name: "a cluster-scoped root with --owned: every namespace", roots: []discovery.Resource{pools}, owned: owned, want: ""},
		{name: "a cluster-scoped root with --events: every namespace", roots: []discovery.Resource{pools}, events: true, want: ""},
		{name: "a cluster-scoped root with --owned and -n: that namespace", roots: []discovery.Resource{pools}, owned: owned, flagNS: "demo", want: "demo"},
		{name: "a namespaced root among them: the watch's namespace", roots: []discovery.Resource{pools, deploy}, owned: owned, want: "current"},
		{name: "nothing followed: the watch's namespace", roots: []discovery.Resource{pools}, want: "current"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags := genericclioptions.NewConfigFlags(false)
			flags.Namespace = &tt.flagNS
			o := &Config{Flags: flags, Namespace: "current"}
			if tt.flagNS != "" {
				o.Namespace = tt.flagNS
			}
			targets := &watchTargets{resources: tt.roots, owned: tt.owned}
			if tt.events {
				targets.eventsRes = &discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
			}
			if got := o.informerNamespace(targets); got != tt.want {
				t.Errorf("informerNamespace() = %q, want %q", got, tt.want)
			}
		})
	}
}
