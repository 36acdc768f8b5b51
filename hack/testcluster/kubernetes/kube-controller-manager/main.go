// Command kube-controller-manager is the upstream kube-controller-manager (deployment,
// replicaset, garbage collector, namespace and the other default controllers), built from the
// Go module proxy so the tests and the demo observe real controllers.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
