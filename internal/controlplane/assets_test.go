package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// assetsDirWith makes dir/name holding the files.
func assetsDirWith(t *testing.T, dir, name string, files ...string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(d, f), nil, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestFindAssets(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, "cache")
	full := append(append([]string{}, ServerBinaries...), ComponentBinaries...)
	servers := assetsDirWith(t, filepath.Join(cache, "testcluster"), "old", ServerBinaries...)
	complete := assetsDirWith(t, filepath.Join(cache, "testcluster"), "new", full...)
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(servers, past, past); err != nil {
		t.Fatal(err)
	}
	env := assetsDirWith(t, root, "env", ServerBinaries...)
	empty := assetsDirWith(t, root, "empty")
	tests := []struct {
		name, explicit, envDir string
		need                   []string
		want, wantErr          string
	}{
		{name: "explicit", explicit: env, need: ServerBinaries, want: env},
		{name: "explicit lacks one", explicit: empty, need: ServerBinaries, wantErr: "no etcd in " + empty + "; build the control plane with 'make testcluster'"},
		{name: "KUBEBUILDER_ASSETS", envDir: env, need: ServerBinaries, want: env},
		{name: "the newest cache dir", need: ServerBinaries, want: complete},
		{name: "KUBEBUILDER_ASSETS without the components: the cache", envDir: env, need: full, want: complete},
		{name: "nowhere", envDir: empty, need: append(full, "more"),
			wantErr: "no etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, kwok-stages.yaml, more found (looked in $KUBEBUILDER_ASSETS, " + filepath.Join(cache, "testcluster") + "/*); build them with 'make testcluster'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECTL_INFORMER_CACHE", cache)
			t.Setenv("KUBEBUILDER_ASSETS", tt.envDir)
			got, err := FindAssets(tt.explicit, tt.need)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("FindAssets error %v, want one line starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FindAssets = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv("KUBECTL_INFORMER_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/x")
	if got := CacheDir(); got != "/x/kubectl-informer/testcluster" {
		t.Errorf("CacheDir = %q", got)
	}
	t.Setenv("KUBECTL_INFORMER_CACHE", "/c")
	if got := CacheDir(); got != "/c/testcluster" {
		t.Errorf("CacheDir = %q", got)
	}
}
