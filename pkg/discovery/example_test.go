package discovery_test

import (
	"fmt"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Resolving what a user types, as kubectl does: plural, short name, kind, group- or
// version-qualified. The plugin builds its Resolver on kubectl's cached discovery client and
// RESTMapper (cli-runtime's ConfigFlags); NewStaticResolver answers for a fixed list of
// resources, as replay does for a recording's, without a server.
func Example() {
	r := discovery.NewStaticResolver([]discovery.Resource{
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true},
		{Group: "example.com", Version: "v1alpha1", Resource: "widgets", Kind: "Widget", Namespaced: true},
	})
	for _, arg := range []string{"deploy", "deployments.v1.apps", "Widget", "widgetz"} {
		res, err := r.Resolve(arg)
		if err != nil {
			fmt.Printf("%-20s error: %v\n", arg, err)
			continue
		}
		fmt.Printf("%-20s %s (kind %s)\n", arg, res.GVR(), res.Kind)
	}
	// Output:
	// deploy               apps/v1, Resource=deployments (kind Deployment)
	// deployments.v1.apps  apps/v1, Resource=deployments (kind Deployment)
	// Widget               example.com/v1alpha1, Resource=widgets (kind Widget)
	// widgetz              error: the server doesn't have a resource type "widgetz"; did you mean "widget"?
}
