//go:build !windows

package cmd

import (
	"testing"
)

func TestControlPlaneFlagsValidate(t *testing.T) {
	tests := []struct {
		name    string
		flags   ControlPlaneFlags
		context string
		cleanup bool
		wantErr string
	}{
		{name: "context only", context: "kind-dev"},
		{name: "control plane", flags: ControlPlaneFlags{Mode: "apiserver"}},
		{name: "full, kept", flags: ControlPlaneFlags{Mode: "full", Keep: true, Assets: "/a"}},
		{name: "both", flags: ControlPlaneFlags{Mode: "apiserver"}, context: "x",
			wantErr: "--control-plane and --context are mutually exclusive: --control-plane starts a cluster of its own; nothing was written"},
		{name: "bad mode", flags: ControlPlaneFlags{Mode: "fast"},
			wantErr: "--control-plane=fast: want --control-plane (etcd and kube-apiserver) or --control-plane=full"},
		{name: "cleanup", flags: ControlPlaneFlags{Mode: "full"}, cleanup: true,
			wantErr: "--cleanup needs --context: a --control-plane is removed when its reenact ends"},
		{name: "keep without", flags: ControlPlaneFlags{Keep: true}, context: "x",
			wantErr: "--control-plane-assets and --keep-control-plane need --control-plane"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.flags.Validate(tt.context, tt.cleanup)
			if got := errString(err); got != tt.wantErr {
				t.Errorf("Validate = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
