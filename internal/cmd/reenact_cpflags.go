package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// Values of --control-plane.
const (
	controlPlaneServers = "apiserver" // etcd and kube-apiserver
	controlPlaneFull    = "full"      // and kube-controller-manager, kube-scheduler, kwok
)

// ControlPlaneFlags are reenact's flags for a control plane of its own.
type ControlPlaneFlags struct {
	// Mode is "" (none: --context names the target), controlPlaneServers or controlPlaneFull.
	Mode   string
	Assets string
	Keep   bool
}

// AddFlags registers --control-plane, --control-plane-assets and --keep-control-plane.
func (f *ControlPlaneFlags) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.Mode, "control-plane", "", "Instead of --context, start a local etcd and kube-apiserver (=full: also kube-controller-manager, kube-scheduler and a kwok node), print its kubeconfig for the controller under test, play into it, and stop it at the end.")
	fs.Lookup("control-plane").NoOptDefVal = controlPlaneServers
	fs.StringVar(&f.Assets, "control-plane-assets", "", "Directory of the --control-plane binaries (default: $KUBEBUILDER_ASSETS, else the newest complete directory 'make testcluster' filled under ~/.cache/kubectl-informer/testcluster).")
	fs.BoolVar(&f.Keep, "keep-control-plane", false, "Leave the --control-plane running when reenact ends (it says how to stop it).")
}

// Validate checks the flags against --context (set or not) and --cleanup.
func (f *ControlPlaneFlags) Validate(context string, cleanup bool) error {
	switch f.Mode {
	case "":
		if f.Assets != "" || f.Keep {
			return errors.New("--control-plane-assets and --keep-control-plane need --control-plane")
		}
		return nil
	case controlPlaneServers, controlPlaneFull:
	default:
		return fmt.Errorf("--control-plane=%s: want --control-plane (etcd and kube-apiserver) or --control-plane=full", f.Mode)
	}
	if context != "" {
		return errors.New("--control-plane and --context are mutually exclusive: --control-plane starts a cluster of its own; nothing was written")
	}
	if cleanup {
		return errors.New("--cleanup needs --context: a --control-plane is removed when its reenact ends")
	}
	return nil
}
