package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Binaries are the files in an assets directory a control plane needs: the servers always,
// the rest for the components asked for.
var (
	ServerBinaries    = []string{"etcd", "kube-apiserver"}
	ComponentBinaries = []string{ControllerManager, Scheduler, Kwok, "kwok-stages.yaml"}
)

// CacheDir is where hack/testcluster/build.sh keeps the binaries it builds, one directory per
// version set: $KUBECTL_INFORMER_CACHE/testcluster, else $XDG_CACHE_HOME/kubectl-informer/...,
// else ~/.cache/kubectl-informer/testcluster.
func CacheDir() string {
	if d := os.Getenv("KUBECTL_INFORMER_CACHE"); d != "" {
		return filepath.Join(d, "testcluster")
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "kubectl-informer", "testcluster")
}

// FindAssets returns the first directory holding every file of need: explicit if given (and
// only it), else $KUBEBUILDER_ASSETS, else the newest complete directory under CacheDir. The
// error, one line, says where it looked and how to get the binaries.
func FindAssets(explicit string, need []string) (string, error) {
	var looked []string
	try := func(label, dir string) bool {
		looked = append(looked, label)
		return dir != "" && missing(dir, need) == ""
	}
	if explicit != "" {
		if m := missing(explicit, need); m != "" {
			return "", fmt.Errorf("no %s in %s; build the control plane with 'make testcluster' in a kubectl-informer checkout and pass the directory hack/testcluster/build.sh prints", m, explicit)
		}
		return explicit, nil
	}
	if d := os.Getenv("KUBEBUILDER_ASSETS"); try("$KUBEBUILDER_ASSETS", d) {
		return d, nil
	}
	cache := CacheDir()
	if d := newestComplete(cache, need); try(cache+"/*", d) {
		return d, nil
	}
	return "", fmt.Errorf("no %s found (looked in %s); build them with 'make testcluster' in a kubectl-informer checkout, or pass --control-plane-assets DIR",
		strings.Join(need, ", "), strings.Join(looked, ", "))
}

// missing names the first file of need that dir lacks ("" when it has them all).
func missing(dir string, need []string) string {
	for _, n := range need {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.IsDir() {
			return n
		}
	}
	return ""
}

// newestComplete is the most recently modified directory under cache holding need ("": none).
func newestComplete(cache string, need []string) string {
	if cache == "" {
		return ""
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		return ""
	}
	type cand struct {
		dir string
		mod int64
	}
	var cands []cand
	for _, e := range entries {
		d := filepath.Join(cache, e.Name())
		if !e.IsDir() || missing(d, need) != "" {
			continue
		}
		if st, err := os.Stat(d); err == nil {
			cands = append(cands, cand{d, st.ModTime().UnixNano()})
		}
	}
	if len(cands) == 0 {
		return ""
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod > cands[j].mod })
	return cands[0].dir
}
