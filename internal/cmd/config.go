package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"k8s.io/client-go/tools/clientcmd"
)

// checkKubeconfig fails when KUBECONFIG names only files that do not exist. client-go skips
// missing files in KUBECONFIG, and with none left it falls back to no configuration at all
// (localhost:8080), which is never what the user meant. A --kubeconfig that does not exist is
// left to client-go, whose error is kubectl's ("stat FILE: no such file or directory").
func checkKubeconfig(configFlags *genericclioptions.ConfigFlags) error {
	if configFlags != nil && configFlags.KubeConfig != nil && *configFlags.KubeConfig != "" {
		return nil
	}
	var missing []string
	for _, p := range filepath.SplitList(os.Getenv(clientcmd.RecommendedConfigPathEnvVar)) {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil // one file to read (or one client-go will report on)
		}
		missing = append(missing, fmt.Sprintf("%q", p))
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("kubeconfig file %s does not exist (named by KUBECONFIG)", missing[0])
	}
	return fmt.Errorf("kubeconfig files %s do not exist (named by KUBECONFIG)", strings.Join(missing, ", "))
}
