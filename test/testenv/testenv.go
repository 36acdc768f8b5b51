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
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
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
	// "--logging-format=json").
	ControllerManagerArgs []string
	// LogDir, if set, also receives the whole output of each component started beside the API
	// server (kube-controller-manager, kube-scheduler, kwok, widget-operator) as LogDir/NAME.log.
	LogDir string

	// Nodes, when > 0, starts kwok and creates that many kwok-managed nodes (kwok-node-0...),
	// Ready before Start returns. Pods bound to them become Running without a container
	// runtime. Without Scheduler, pods must name their node themselves.
	Nodes int
}

// RealControlPlane is the Options of a cluster with controllers, a scheduler and n kwok nodes.
func RealControlPlane(n int) Options {
	return Options{Controllers: true, Scheduler: true, Nodes: n}
}

// Cluster is a running control plane.
type Cluster struct {
	// KubeconfigPath is a kubeconfig file for an admin user (group system:masters).
	KubeconfigPath string
	RESTConfig     *rest.Config
	Dynamic        dynamic.Interface
	Clientset      kubernetes.Interface
	// Dir is a private temporary directory, removed by Stop.
	Dir string
	// PluginDir, if set, is put first on PATH by Kubectl and RunPlugin. RunPlugin sets it
	// (building the plugin) when it is empty.
	PluginDir string
	// Env is the underlying envtest environment, for anything not wrapped here.
	Env *envtest.Environment

	opts       Options
	wd         *watchdog
	apiLog     *TailBuffer
	etcdLog    *TailBuffer
	mu         sync.Mutex // guards the fields below and start/stop of servers
	stopped    bool
	apiStopped bool
	crds       []*apiextensionsv1.CustomResourceDefinition
	extra      []*APIServerHandle
	components []*Component
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

// Start starts etcd and kube-apiserver, writes an admin kubeconfig and installs opts.CRDs.
// The caller must call Stop, also when a later step fails.
func Start(ctx context.Context, opts Options) (_ *Cluster, retErr error) {
	// envtest logs through controller-runtime's logger; unset, it prints a stack trace saying so.
	ctrllog.SetLogger(logr.Discard())
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 20 * time.Second
	}
	assets, err := assetsDir(ctx, opts.AssetsDir)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubectl-informer-testenv-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, opts: opts, apiLog: newTail(64 << 10), etcdLog: newTail(64 << 10)}
	defer func() {
		if retErr != nil {
			_ = c.Stop()
		}
	}()
	if c.wd, err = startWatchdog(dir); err != nil {
		return nil, err
	}

	certDir, dataDir := filepath.Join(dir, "apiserver"), filepath.Join(dir, "etcd")
	for _, d := range []string{certDir, dataDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	etcdPort, peerPort, apiPort, err := freePorts3()
	if err != nil {
		return nil, err
	}
	etcd := &envtest.Etcd{
		Path:    filepath.Join(assets, "etcd"),
		DataDir: dataDir,
		URL:     &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(etcdPort))},
	}
	etcd.Configure().Set("listen-peer-urls", "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort)))
	api := &envtest.APIServer{
		Path: filepath.Join(assets, "kube-apiserver"),
		// Our own CertDir is kept across StopAPIServer/RestartAPIServer, so the serving
		// certificate, client CA and service-account keys stay the same.
		CertDir: certDir,
	}
	api.SecureServing.Address = "127.0.0.1"
	api.SecureServing.Port = strconv.Itoa(apiPort)
	if opts.Nodes > 0 {
		// kwok nodes have an InternalIP only; logs, exec and port-forward reach kwok there.
		api.Configure().Set("kubelet-preferred-address-types", "InternalIP")
	}
	for k, v := range opts.APIServerFlags {
		api.Configure().Set(k, v)
	}
	c.wireOutput(api, etcd)

	c.Env = &envtest.Environment{
		ControlPlane:             envtest.ControlPlane{APIServer: api, Etcd: etcd, KubectlPath: filepath.Join(assets, "kubectl")},
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: opts.StartTimeout,
		ControlPlaneStopTimeout:  opts.StopTimeout,
	}
	_, err = c.Env.Start()
	c.wd.refresh()
	c.wd.removeAlso(c.Env.WebhookInstallOptions.LocalServingCertDir)
	if err != nil {
		return nil, fmt.Errorf("start control plane (assets %s): %w%s", assets, err, c.logTails())
	}

	admin, err := c.Env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}},
		&rest.Config{QPS: 1000, Burst: 2000})
	if err != nil {
		return nil, fmt.Errorf("add admin user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	c.KubeconfigPath = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(c.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	c.RESTConfig = admin.Config()
	if c.Clientset, err = kubernetes.NewForConfig(c.RESTConfig); err != nil {
		return nil, err
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.RESTConfig); err != nil {
		return nil, err
	}
	for _, crd := range opts.CRDs {
		if err := c.InstallCRD(ctx, crd); err != nil {
			return nil, err
		}
	}
	if err := c.startControlPlane(ctx, assets); err != nil {
		return nil, err
	}
	return c, nil
}

// Stop stops every process the cluster started (extra API servers, the API server, etcd),
// each by its process (group) id, and removes Dir. It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var errs []error
	// Components first, newest first: they would only log errors once the API server is gone.
	for i := len(c.components) - 1; i >= 0; i-- {
		errs = append(errs, c.components[i].Stop())
	}
	for _, h := range c.extra {
		errs = append(errs, h.Stop())
	}
	if c.Env != nil {
		// ControlPlane.Stop (not Environment.Stop) so that etcd is stopped even if the
		// API server does not stop in time; it is a no-op for processes already gone.
		errs = append(errs, c.Env.ControlPlane.Stop(), c.Env.WebhookInstallOptions.Cleanup())
	}
	errs = append(errs, os.RemoveAll(c.Dir))
	c.wd.stop()
	return errors.Join(errs...)
}

// APIServerURL is the https URL of the (first) API server.
func (c *Cluster) APIServerURL() string {
	return c.Env.ControlPlane.APIServer.SecureServing.URL("https", "/").String()
}

// EtcdURL is the client URL of etcd.
func (c *Cluster) EtcdURL() string { return c.Env.ControlPlane.Etcd.URL.String() }

// APIServerLog returns the tail of the API server's output (empty if
// Options.ControlPlaneOutput was set).
func (c *Cluster) APIServerLog() string { return c.apiLog.String() }

func (c *Cluster) wireOutput(api *envtest.APIServer, etcd *envtest.Etcd) {
	if w := c.opts.ControlPlaneOutput; w != nil {
		api.Out, api.Err, etcd.Out, etcd.Err = w, w, w, w
		return
	}
	api.Out, api.Err, etcd.Out, etcd.Err = c.apiLog, c.apiLog, c.etcdLog, c.etcdLog
}

func (c *Cluster) logTails() string {
	var b strings.Builder
	if s := c.etcdLog.String(); s != "" {
		fmt.Fprintf(&b, "\n--- etcd output (tail) ---\n%s", s)
	}
	if s := c.apiLog.String(); s != "" {
		fmt.Fprintf(&b, "\n--- kube-apiserver output (tail) ---\n%s", s)
	}
	return b.String()
}

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

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts3 returns three distinct free ports (held open together so they differ).
func freePorts3() (a, b, c int, err error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports [3]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, 0, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports[0], ports[1], ports[2], nil
}

// TailBuffer is an io.Writer keeping the last max bytes written.
type TailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// NewTailBuffer keeps the last max bytes written to it.
func NewTailBuffer(max int) *TailBuffer { return &TailBuffer{max: max} }

func newTail(max int) *TailBuffer { return NewTailBuffer(max) }

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// ServerPID returns the process id of this cluster's etcd or kube-apiserver (exe is the binary's
// base name), or 0 when it is not running.
func (c *Cluster) ServerPID(exe string) int {
	for _, pid := range childrenMentioning(c.Dir) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		if argv0, _, _ := bytes.Cut(cmdline, []byte{0}); filepath.Base(string(argv0)) == exe {
			return pid
		}
	}
	return 0
}
