// Package testenv starts a throw-away Kubernetes control plane (etcd + kube-apiserver, through
// controller-runtime's envtest) for the tests and the demo of kubectl-informer, and runs kubectl
// and the plugin against it.
//
// Everything listens on 127.0.0.1 on ports picked at run time. The binaries come from
// KUBEBUILDER_ASSETS or, when that is unset, from hack/testcluster/build.sh.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ModulePath is the module whose root Start and BuildPlugin look for.
const ModulePath = "github.com/kubectl-informer/kubectl-informer"

// Options configures Start. The zero value is usable.
type Options struct {
	// CRDs are installed after the control plane is up; Start returns once each is
	// Established and served by discovery.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// APIServerFlags are extra kube-apiserver flags, name without the leading "--"
	// (e.g. {"watch-cache": "false"}). They override envtest's defaults.
	APIServerFlags map[string]string
	// AssetsDir holds kube-apiserver, etcd (and kubectl). Default: $KUBEBUILDER_ASSETS,
	// else the directory printed by hack/testcluster/build.sh.
	AssetsDir string
	// ControlPlaneOutput, if set, receives the output of etcd and kube-apiserver.
	// Otherwise the last 64 KiB of each is kept and shown in start errors.
	ControlPlaneOutput io.Writer
	// StartTimeout bounds each process start (default 60s). StopTimeout bounds each
	// graceful stop before the process group is killed (default 20s).
	StartTimeout, StopTimeout time.Duration

	// Controllers starts kube-controller-manager with every default controller (deployment,
	// replicaset, garbage collector, namespace, service account, ...).
	Controllers bool
	// Scheduler starts kube-scheduler.
	Scheduler bool
	// ControllerManagerArgs are extra kube-controller-manager flags (e.g. "-v=4",
	// "--logging-format=json"); SchedulerArgs extra kube-scheduler flags.
	ControllerManagerArgs []string
	SchedulerArgs         []string
	// LogDir, if set, also receives the whole output of each component started beside the API
	// server (kube-controller-manager, kube-scheduler, kwok, widget-operator) as LogDir/NAME.log.
	LogDir string

	// Audit turns the API server's audit log on (AuditPolicy, Cluster.AuditLogPath); off by
	// default.
	Audit bool

	// Nodes, when > 0, starts kwok and creates that many kwok-managed nodes (kwok-node-0...),
	// Ready before Start returns. Pods bound to them become Running without a container
	// runtime. Without Scheduler, pods must name their node themselves.
	Nodes int
}

// RealControlPlane is the Options of a cluster with controllers, a scheduler and n kwok nodes.
func RealControlPlane(n int) Options {
	return Options{Controllers: true, Scheduler: true, Nodes: n}
}

// Cluster is a running control plane (internal/controlplane's, which the plugin's
// reenact --control-plane starts too), with the tests' helpers around it.
type Cluster struct {
	// ControlPlane holds KubeconfigPath (an admin user's kubeconfig), RESTConfig, Dynamic,
	// Clientset, Dir (a private temporary directory, removed by Stop) and Env (the underlying
	// envtest environment).
	*controlplane.ControlPlane
	// PluginDir, if set, is put first on PATH by Kubectl and RunPlugin. RunPlugin sets it
	// (building the plugin) when it is empty.
	PluginDir string
	// AuditLogPath is the API server's audit log, with Options.Audit; "" otherwise.
	AuditLogPath string

	opts       Options
	wd         *watchdog
	mu         sync.Mutex // guards the fields below and start/stop of servers
	stopped    bool
	apiStopped bool
	crds       []*apiextensionsv1.CustomResourceDefinition
	extra      []*APIServerHandle
	// kwokCRDErr says why kwok runs without its port-forward and logs CRDs (nil: it has them).
	kwokCRDErr error
}

// StartT starts a cluster for a test and stops it when the test ends (failed or not).
func StartT(t testing.TB, opts Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("testenv: stop: %v", err)
		}
	})
	return c
}

// Start starts etcd and kube-apiserver, writes an admin kubeconfig, installs opts.CRDs and
// starts the components opts asks for. The caller must call Stop, also when a later step fails.
func Start(ctx context.Context, opts Options) (_ *Cluster, retErr error) {
	assets, err := assetsDir(ctx, opts.AssetsDir)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubectl-informer-testenv-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts}
	defer func() {
		if retErr != nil {
			_ = c.Stop()
			_ = os.RemoveAll(dir) // when the control plane did not start
		}
	}()
	if c.wd, err = startWatchdog(dir); err != nil {
		return nil, err
	}
	apiFlags := opts.APIServerFlags
	if opts.Audit {
		if apiFlags, c.AuditLogPath, err = auditFlags(dir, apiFlags); err != nil {
			return nil, err
		}
	}
	cp, err := controlplane.StartServers(ctx, controlplane.Options{
		AssetsDir: assets, Dir: dir, APIServerFlags: apiFlags, Output: opts.ControlPlaneOutput,
		StartTimeout: opts.StartTimeout, StopTimeout: opts.StopTimeout,
		Controllers: opts.Controllers, Scheduler: opts.Scheduler, ControllerManagerArgs: opts.ControllerManagerArgs,
		SchedulerArgs: opts.SchedulerArgs,
		Nodes:         opts.Nodes, LogDir: opts.LogDir, OnProcess: c.wd.refresh,
	})
	if err != nil {
		return nil, err
	}
	c.ControlPlane, c.opts = cp, opts
	c.opts.StartTimeout, c.opts.StopTimeout = cp.Opts().StartTimeout, cp.Opts().StopTimeout
	c.wd.removeAlso(c.Env.WebhookInstallOptions.LocalServingCertDir)
	for _, crd := range opts.CRDs {
		if err := c.InstallCRD(ctx, crd); err != nil {
			return nil, err
		}
	}
	var kwokArgs []string
	if opts.Nodes > 0 {
		// Port forwarding to an address of our choice, and pod logs from a file of ours, per
		// object. Without kwok's module in the module cache the cluster still starts;
		// ForwardNamespacePort and ServeNamespaceLogs say why they cannot.
		if c.kwokCRDErr = c.installKwokCRDs(ctx); c.kwokCRDErr == nil {
			kwokArgs = append(kwokArgs, "--enable-crds=PortForward,ClusterPortForward,Logs,ClusterLogs")
		}
	}
	if err := cp.StartComponents(ctx, kwokArgs...); err != nil {
		return nil, err
	}
	return c, nil
}

// Stop stops every process the cluster started (components, extra API servers, the API
// server, etcd), each by its process (group) id, and removes Dir. It is safe to call more
// than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var errs []error
	if c.ControlPlane != nil {
		// Components first: they would only log errors once the API servers are gone.
		errs = append(errs, c.StopComponents())
	}
	for _, h := range c.extra {
		errs = append(errs, h.Stop())
	}
	if c.ControlPlane != nil {
		errs = append(errs, c.ControlPlane.Stop())
	}
	c.wd.stop()
	return errors.Join(errs...)
}

// logTails is the tail of etcd's and kube-apiserver's output, for an error message.
func (c *Cluster) logTails() string { return c.LogTails() }

// assetsDir finds kube-apiserver and etcd: explicit dir, $KUBEBUILDER_ASSETS, or build.sh.
func assetsDir(ctx context.Context, explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "testcluster", "build.sh"))
	cmd.Stderr = os.Stderr // progress of a first, slow build
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/testcluster/build.sh: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// ModuleRoot walks up from the working directory to the go.mod of ModulePath.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePathOf(data) == ModulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory (run inside the repository, or set KUBEBUILDER_ASSETS)", ModulePath)
		}
		dir = parent
	}
}

func modulePathOf(gomod []byte) string {
	for _, line := range bytes.Split(gomod, []byte("\n")) {
		if f := strings.Fields(string(line)); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// Component is a process started beside the API server, stopped by its process group id.
type Component = controlplane.Component

// Component names, as Cluster.Component takes them.
const (
	ControllerManager = controlplane.ControllerManager
	Scheduler         = controlplane.Scheduler
	Kwok              = controlplane.Kwok
)

// KwokNodeAnnotation marks the nodes kwok manages (the annotation kwok's own examples use).
const KwokNodeAnnotation = controlplane.KwokNodeAnnotation

// TailBuffer is an io.Writer keeping the last max bytes written.
type TailBuffer = controlplane.TailBuffer

// NewTailBuffer keeps the last max bytes written to it.
func NewTailBuffer(max int) *TailBuffer { return controlplane.NewTailBuffer(max) }

func newTail(max int) *TailBuffer { return controlplane.NewTailBuffer(max) }

func freePort() (int, error) { return controlplane.FreePort() }

func childrenMentioning(s string) []int { return controlplane.ChildrenMentioning(s) }

func tailOf(p *Component) string { return p.Tail() }

func waitFor(ctx context.Context, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, cond)
}
