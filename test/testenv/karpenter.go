package testenv

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// KarpenterName is the component name of Karpenter's kwok provider (its log file in LogDir).
const KarpenterName = "karpenter"

// KarpenterOptions configures StartKarpenter.
type KarpenterOptions struct {
	// LogFile, if set, also receives Karpenter's whole output (its zap JSON lines), appended.
	LogFile string
	// Args are extra flags of Karpenter (e.g. "--log-level=debug").
	Args []string
}

// Karpenter is a running Karpenter kwok provider (hack/testcluster/build-karpenter.sh): a real
// open-source controller-runtime operator of 30-odd controllers whose cloud provider makes kwok
// Nodes for its NodeClaims.
type Karpenter struct {
	*Component
	// MetricsURL is its plain-HTTP /metrics.
	MetricsURL string
}

// KarpenterDir is the directory of Karpenter's build: $KARPENTER_DIR, else the one
// hack/testcluster/build-karpenter.sh builds (or finds in its cache). It holds karpenter-kwok
// and crds/.
func KarpenterDir(ctx context.Context) (string, error) {
	if d := os.Getenv("KARPENTER_DIR"); d != "" {
		return d, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "testcluster", "build-karpenter.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/testcluster/build-karpenter.sh: %w\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// StartKarpenter installs Karpenter's CRDs (as its module ships them) and starts its kwok
// provider against this cluster with the admin kubeconfig, leader election off, logging as it
// ships (zap JSON at info). It returns once its metrics endpoint answers. Cluster.Stop stops it
// (by its process group), as does Karpenter.Stop. Karpenter makes Nodes with kwok's
// annotation, so the cluster must run kwok (Options.Nodes > 0).
func (c *Cluster) StartKarpenter(ctx context.Context, opts KarpenterOptions) (*Karpenter, error) {
	dir, err := KarpenterDir(ctx)
	if err != nil {
		return nil, err
	}
	crds, err := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return nil, fmt.Errorf("no CRDs in %s/crds (%v)", dir, err)
	}
	for _, f := range crds {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if err := c.InstallCRD(ctx, crd); err != nil {
			return nil, err
		}
	}
	// Karpenter binds its metrics and health probe servers on every interface (":PORT", no
	// flag for the address): the ports are picked free on 127.0.0.1 at run time.
	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--metrics-port=" + strconv.Itoa(ports[0]),
		"--health-probe-port=" + strconv.Itoa(ports[1]),
		"--disable-leader-election=true",
	}, opts.Args...)
	// Karpenter parses only its own flags; controller-runtime finds the kubeconfig in $KUBECONFIG.
	env := []string{"KUBECONFIG=" + c.KubeconfigPath}
	p, err := c.StartComponentEnv(KarpenterName, filepath.Join(dir, "karpenter-kwok"), ports[0],
		[]controlplane.LogFile{{Path: opts.LogFile}}, env, args...)
	if err != nil {
		return nil, err
	}
	k := &Karpenter{Component: p, MetricsURL: "http" + strings.TrimPrefix(p.URL("/metrics"), "https")}
	if err := waitFor(ctx, c.opts.StartTimeout, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("%s exited: %v", KarpenterName, err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, k.MetricsURL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("%s metrics (%s) not serving: %w%s", KarpenterName, k.MetricsURL, err, tailOf(p))
	}
	return k, nil
}
