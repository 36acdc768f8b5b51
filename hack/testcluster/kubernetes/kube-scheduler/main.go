// Command kube-scheduler is the upstream kube-scheduler, built from the Go module proxy so pods
// in the tests and the demo are bound to (kwok) nodes the way a cluster binds them.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
