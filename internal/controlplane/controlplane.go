// Package controlplane starts a throw-away Kubernetes control plane on this machine: etcd and
// kube-apiserver (through controller-runtime's envtest), and on request kube-controller-manager,
// kube-scheduler and kwok (nodes and pods without a container runtime). The tests
// (test/testenv), the demo and `kubectl informer reenact --control-plane` all start it here.
//
// Everything listens on 127.0.0.1 on ports picked at run time; every process runs in a process
// group of its own and is stopped by its id.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Options configures Start. AssetsDir is required; the rest has defaults.
type Options struct {
	// AssetsDir holds etcd and kube-apiserver (and, for the components asked for,
	// kube-controller-manager, kube-scheduler, kwok and kwok-stages.yaml): see FindAssets.
	AssetsDir string
	// Dir is the control plane's private directory (certificates, etcd data, kubeconfig),
	// removed by Stop. Default: a new temporary directory.
	Dir string
	// APIServerFlags are extra kube-apiserver flags, name without the leading "--".
	APIServerFlags map[string]string
	// Output, if set, receives the output of every process. Otherwise the last 64 KiB of each
	// is kept and shown in start errors.
	Output io.Writer
	// StartTimeout bounds each process start (default 60s). StopTimeout bounds each graceful
	// stop before the process group is killed (default 20s).
	StartTimeout, StopTimeout time.Duration

	// Controllers starts kube-controller-manager with every default controller.
	Controllers bool
	// Scheduler starts kube-scheduler.
	Scheduler bool
	// ControllerManagerArgs are extra kube-controller-manager flags; SchedulerArgs extra
	// kube-scheduler flags.
	ControllerManagerArgs []string
	SchedulerArgs         []string
	// Nodes, when > 0, starts kwok and creates that many kwok-managed nodes (kwok-node-0...),
	// Ready before StartComponents returns.
	Nodes int
	// LogDir, if set, also receives the whole output of each component started beside the API
	// server as LogDir/NAME.log.
	LogDir string
	// OnProcess, if set, is called after each process is started or stopped (test/testenv's
	// watchdog rereads the process list then).
	OnProcess func()
}

// ControlPlane is a running etcd and kube-apiserver, and the components started beside them.
type ControlPlane struct {
	// Dir is the private directory given in Options.Dir or made by StartServers.
	Dir string
	// KubeconfigPath is a kubeconfig file for an admin user (group system:masters).
	KubeconfigPath string
	// Context is the name of the kubeconfig's (only, current) context.
	Context    string
	RESTConfig *rest.Config
	Dynamic    dynamic.Interface
	Clientset  kubernetes.Interface
	// Env is the underlying envtest environment, for anything not wrapped here.
	Env *envtest.Environment

	opts       Options
	apiLog     *TailBuffer
	etcdLog    *TailBuffer
	mu         sync.Mutex // guards the fields below
	stopped    bool
	components []*Component
}

// Start starts etcd and kube-apiserver (StartServers), then what opts asks for beside them
// (StartComponents). On failure it stops what it started.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	cp, err := StartServers(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := cp.StartComponents(ctx); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

// StartServers starts etcd and kube-apiserver on free ports of 127.0.0.1 and writes an admin
// kubeconfig. On failure it stops what it started and removes the directory it made.
func StartServers(ctx context.Context, opts Options) (_ *ControlPlane, retErr error) {
	// envtest logs through controller-runtime's logger; unset, it prints a stack trace saying so.
	crlog.SetLogger(logr.Discard())
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 20 * time.Second
	}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "kubectl-informer-controlplane-")
		if err != nil {
			return nil, err
		}
		opts.Dir = dir
	} else if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	cp := &ControlPlane{Dir: opts.Dir, opts: opts, apiLog: NewTailBuffer(64 << 10), etcdLog: NewTailBuffer(64 << 10)}
	defer func() {
		if retErr != nil {
			_ = cp.Stop()
		}
	}()
	if err := cp.startEnv(); err != nil {
		return nil, err
	}
	return cp, cp.addAdmin()
}

// startEnv starts etcd and kube-apiserver through envtest.
func (cp *ControlPlane) startEnv() error {
	opts := cp.opts
	certDir, dataDir := filepath.Join(cp.Dir, "apiserver"), filepath.Join(cp.Dir, "etcd")
	for _, d := range []string{certDir, dataDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	ports, err := FreePorts(3)
	if err != nil {
		return err
	}
	etcd := &envtest.Etcd{
		Path:    filepath.Join(opts.AssetsDir, "etcd"),
		DataDir: dataDir,
		URL:     &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))},
	}
	etcd.Configure().Set("listen-peer-urls", "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])))
	api := &envtest.APIServer{
		Path: filepath.Join(opts.AssetsDir, "kube-apiserver"),
		// Our own CertDir is kept across a stop and restart of the API server, so the serving
		// certificate, client CA and service-account keys stay the same.
		CertDir: certDir,
	}
	api.SecureServing.Address = "127.0.0.1"
	api.SecureServing.Port = strconv.Itoa(ports[2])
	if opts.Nodes > 0 {
		// kwok nodes have an InternalIP only; logs, exec and port-forward reach kwok there.
		api.Configure().Set("kubelet-preferred-address-types", "InternalIP")
	}
	for k, v := range opts.APIServerFlags {
		api.Configure().Set(k, v)
	}
	api.Out, api.Err, etcd.Out, etcd.Err = cp.apiLog, cp.apiLog, cp.etcdLog, cp.etcdLog
	if w := opts.Output; w != nil {
		api.Out, api.Err, etcd.Out, etcd.Err = w, w, w, w
	}
	cp.Env = &envtest.Environment{
		ControlPlane:             envtest.ControlPlane{APIServer: api, Etcd: etcd, KubectlPath: filepath.Join(opts.AssetsDir, "kubectl")},
		BinaryAssetsDirectory:    opts.AssetsDir,
		ControlPlaneStartTimeout: opts.StartTimeout,
		ControlPlaneStopTimeout:  opts.StopTimeout,
	}
	_, err = cp.Env.Start()
	cp.notify()
	if err != nil {
		return fmt.Errorf("start control plane (assets %s): %w%s", opts.AssetsDir, err, cp.LogTails())
	}
	return nil
}

// addAdmin writes the admin kubeconfig and makes the clients.
func (cp *ControlPlane) addAdmin() error {
	admin, err := cp.Env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}},
		&rest.Config{QPS: 1000, Burst: 2000})
	if err != nil {
		return fmt.Errorf("add admin user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	cp.KubeconfigPath = filepath.Join(cp.Dir, "kubeconfig")
	if err := os.WriteFile(cp.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}
	cp.Context = "envtest" // the one context envtest's kubeconfig names
	cp.RESTConfig = admin.Config()
	if cp.Clientset, err = kubernetes.NewForConfig(cp.RESTConfig); err != nil {
		return err
	}
	cp.Dynamic, err = dynamic.NewForConfig(cp.RESTConfig)
	return err
}

// StopComponents stops the components (newest first), each by its process group id. Stop
// calls it; it is safe to call more than once.
func (cp *ControlPlane) StopComponents() error {
	cp.mu.Lock()
	comps := cp.components
	cp.mu.Unlock()
	var errs []error
	// Newest first: they would only log errors once what they talk to is gone.
	for i := len(comps) - 1; i >= 0; i-- {
		errs = append(errs, comps[i].Stop())
	}
	cp.notify()
	return errors.Join(errs...)
}

// Stop stops every process the control plane started (components, kube-apiserver, etcd), each
// by its process (group) id, and removes Dir. It is safe to call more than once.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	if cp.stopped {
		cp.mu.Unlock()
		return nil
	}
	cp.stopped = true
	cp.mu.Unlock()
	errs := []error{cp.StopComponents()}
	if cp.Env != nil {
		// ControlPlane.Stop (not Environment.Stop) so that etcd is stopped even if the API
		// server does not stop in time; it is a no-op for processes already gone.
		errs = append(errs, cp.Env.ControlPlane.Stop(), cp.Env.WebhookInstallOptions.Cleanup())
	}
	cp.notify()
	errs = append(errs, os.RemoveAll(cp.Dir))
	return errors.Join(errs...)
}

// PIDs returns the process ids of what is running: etcd, kube-apiserver and the components
// (each also the id of its process group), by name.
func (cp *ControlPlane) PIDs() map[string]int {
	pids := map[string]int{}
	if cp.Env != nil {
		for _, name := range []string{"etcd", "kube-apiserver"} {
			if pid := cp.ServerPID(name); pid != 0 {
				pids[name] = pid
			}
		}
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.components {
		if exited, _ := p.Exited(); !exited {
			pids[p.Name] = p.PID()
		}
	}
	return pids
}

// APIServerURL is the https URL of the API server.
func (cp *ControlPlane) APIServerURL() string {
	return cp.Env.ControlPlane.APIServer.SecureServing.URL("https", "/").String()
}

// EtcdURL is the client URL of etcd.
func (cp *ControlPlane) EtcdURL() string { return cp.Env.ControlPlane.Etcd.URL.String() }

// APIServerLog returns the tail of the API server's output (empty if Options.Output was set).
func (cp *ControlPlane) APIServerLog() string { return cp.apiLog.String() }

// LogTails is the tail of etcd's and kube-apiserver's output, for an error message.
func (cp *ControlPlane) LogTails() string {
	var b strings.Builder
	if s := cp.etcdLog.String(); s != "" {
		fmt.Fprintf(&b, "\n--- etcd output (tail) ---\n%s", s)
	}
	if s := cp.apiLog.String(); s != "" {
		fmt.Fprintf(&b, "\n--- kube-apiserver output (tail) ---\n%s", s)
	}
	return b.String()
}

// Opts returns the options the control plane was started with (defaults filled in).
func (cp *ControlPlane) Opts() Options { return cp.opts }

func (cp *ControlPlane) notify() {
	if cp.opts.OnProcess != nil {
		cp.opts.OnProcess()
	}
}
