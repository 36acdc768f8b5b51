package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestCheckKubeconfig(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "config")
	if err := os.WriteFile(exists, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing, missing2 := filepath.Join(dir, "nope"), filepath.Join(dir, "nope2")
	list := func(p ...string) string { return strings.Join(p, string(os.PathListSeparator)) }
	tests := []struct {
		name, env, flag, wantErr string
	}{
		{name: "unset"},
		{name: "exists", env: exists},
		{name: "missing", env: missing, wantErr: `kubeconfig file "` + missing + `" does not exist (named by KUBECONFIG)`},
		{name: "all missing", env: list(missing, "", missing2), wantErr: `kubeconfig files "` + missing + `", "` + missing2 + `" do not exist (named by KUBECONFIG)`},
		{name: "one of several exists", env: list(missing, exists)},
		{name: "--kubeconfig is client-go's to check", env: missing, flag: missing2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			f := genericclioptions.NewConfigFlags(true)
			*f.KubeConfig = tt.flag
			err := checkKubeconfig(f)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error %v, want none", err)
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
