package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Component names, as Cluster.Component takes them.
const (
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kwok              = "kwok"
)

// KwokNodeAnnotation marks the nodes kwok manages (the annotation kwok's own examples use).
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// Component is a control-plane process started beside the API server: kube-controller-manager,
// kube-scheduler or kwok. It runs in a process group of its own and is stopped by its id.
type Component struct {
	// Name is the binary's name.
	Name string
	// Port is the component's own serving port on 127.0.0.1 (the secure port of
	// kube-controller-manager and kube-scheduler, kwok's kubelet-API port).
	Port int

	cmd  *exec.Cmd
	log  *TailBuffer
	done chan struct{}
	err  error // set before done is closed
	once sync.Once
	stop time.Duration
	// logFiles are the copies of its output (Options.LogDir, componentLogs), closed when it
	// exits.
	logFiles []*os.File
}

func (p *Component) closeLogs() {
	for _, f := range p.logFiles {
		_ = f.Close()
	}
}

// URL is https://127.0.0.1:Port/ + path.
func (p *Component) URL(path string) string {
	return "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port)) + "/" + strings.TrimPrefix(path, "/")
}

// Log returns the tail of the component's output (empty if Options.ControlPlaneOutput is set).
func (p *Component) Log() string { return p.log.String() }

// PID is the component's process id (also its process group id).
func (p *Component) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has exited, and how.
func (p *Component) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the component's process group, waits for it (up to the cluster's
// StopTimeout) and then kills the group. Idempotent.
func (p *Component) Stop() error {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(p.stop):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
	return nil
}

// startComponent runs bin with args in its own process group, its output kept in a tail buffer
// (or sent to Options.ControlPlaneOutput). The command line must mention c.Dir (a kubeconfig
// there does), so that the watchdog kills it if this process dies.
func (c *Cluster) startComponent(name, bin string, port int, args ...string) (*Component, error) {
	var logs componentLogs
	if c.opts.LogDir != "" {
		logs.file = filepath.Join(c.opts.LogDir, name+".log")
	}
	return c.startComponentLogged(name, bin, port, logs, args...)
}

// componentLogs are the files a component's whole output is also appended to ("": none): as
// it is, and as a kubelet keeps a container's log (CRI format, for kwok's Logs to serve); and a
// writer that also receives it (nil: none).
type componentLogs struct {
	file, criFile string
	w             io.Writer
}

// startComponentLogged is startComponent with the whole output also appended to logs.
func (c *Cluster) startComponentLogged(name, bin string, port int, logs componentLogs, args ...string) (*Component, error) {
	p := &Component{Name: name, Port: port, log: newTail(64 << 10), done: make(chan struct{}), stop: c.opts.StopTimeout}
	p.cmd = exec.Command(bin, args...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out io.Writer = p.log
	if w := c.opts.ControlPlaneOutput; w != nil {
		out = w
	}
	for _, l := range []struct {
		path string
		cri  bool
	}{{logs.file, false}, {logs.criFile, true}} {
		if l.path == "" {
			continue
		}
		f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			p.closeLogs()
			return nil, err
		}
		p.logFiles = append(p.logFiles, f)
		var w io.Writer = f
		if l.cri {
			w = NewCRILogWriter(f)
		}
		out = io.MultiWriter(out, w)
	}
	if logs.w != nil {
		out = io.MultiWriter(out, logs.w)
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		p.closeLogs()
		return nil, errors.New("testenv: cluster stopped")
	}
	if err := p.cmd.Start(); err != nil {
		p.closeLogs()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		p.closeLogs()
		close(p.done)
	}()
	c.components = append(c.components, p)
	c.wd.refresh()
	return p, nil
}

// Component returns the running component called name (ControllerManager, Scheduler, Kwok),
// or nil when the cluster was started without it.
func (c *Cluster) Component(name string) *Component {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.components {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// startControlPlane starts what opts asks for beyond the API server, and waits until each is
// working: kube-controller-manager and kube-scheduler healthy (and the service-account
// controller has made "default" in "default"), every kwok node Ready.
func (c *Cluster) startControlPlane(ctx context.Context, assets string) error {
	if !c.opts.Controllers && !c.opts.Scheduler && c.opts.Nodes == 0 {
		return nil
	}
	caFile := filepath.Join(c.Dir, "cluster-ca.crt")
	if err := os.WriteFile(caFile, c.RESTConfig.CAData, 0o600); err != nil {
		return err
	}
	certDir := c.Env.ControlPlane.APIServer.CertDir
	if c.opts.Controllers {
		p, err := c.startServing(ctx, ControllerManager, assets, append([]string{
			// One identity for all controllers, so their writes carry the field manager
			// kube-controller-manager as in most clusters' audit of it.
			"--use-service-account-credentials=false",
			"--controllers=*",
			"--service-account-private-key-file=" + filepath.Join(certDir, "sa-signer.key"),
			"--root-ca-file=" + caFile,
			// Pods of a namespace being deleted, nodes that stop beating: act at once.
			"--concurrent-gc-syncs=5",
		}, c.opts.ControllerManagerArgs...)...,
		)
		if err != nil {
			return err
		}
		// The controllers are running once the service-account controller has acted.
		if err := waitFor(ctx, c.opts.StartTimeout, func(ctx context.Context) (bool, error) {
			_, err := c.Clientset.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		}); err != nil {
			return fmt.Errorf("kube-controller-manager made no ServiceAccount default/default: %w%s", err, tailOf(p))
		}
	}
	if c.opts.Scheduler {
		if _, err := c.startServing(ctx, Scheduler, assets); err != nil {
			return err
		}
	}
	if c.opts.Nodes > 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		var extra []string
		// Port forwarding to an address of our choice, and pod logs from a file of ours, per
		// object. Without kwok's module in the module cache the cluster still starts;
		// ForwardNamespacePort and ServeNamespaceLogs say why they cannot.
		if c.kwokCRDErr = c.installKwokCRDs(ctx); c.kwokCRDErr == nil {
			extra = append(extra, "--enable-crds=PortForward,ClusterPortForward,Logs,ClusterLogs")
		}
		p, err := c.startComponent(Kwok, filepath.Join(assets, Kwok), port, append([]string{
			"--kubeconfig=" + c.KubeconfigPath,
			"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
			"--config=" + filepath.Join(assets, "kwok-stages.yaml"),
			// kwok serves the kubelet API (logs, exec, port-forward) for its nodes here.
			"--node-ip=127.0.0.1",
			"--node-port=" + strconv.Itoa(port),
			"--server-address=127.0.0.1:" + strconv.Itoa(port),
		}, extra...)...)
		if err != nil {
			return err
		}
		for i := range c.opts.Nodes {
			if err := c.AddNode(ctx, fmt.Sprintf("kwok-node-%d", i)); err != nil {
				return err
			}
		}
		if err := waitFor(ctx, c.opts.StartTimeout, func(ctx context.Context) (bool, error) {
			if exited, err := p.Exited(); exited {
				return false, fmt.Errorf("kwok exited: %v", err)
			}
			nodes, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil //nolint:nilerr // retry
			}
			ready := 0
			for _, n := range nodes.Items {
				if nodeReady(&n) {
					ready++
				}
			}
			return ready >= c.opts.Nodes, nil
		}); err != nil {
			return fmt.Errorf("kwok nodes not Ready: %w%s", err, tailOf(p))
		}
	}
	return nil
}

// startServing starts kube-controller-manager or kube-scheduler with what both take (the admin
// kubeconfig for the API and for delegated authentication and authorization, a secure port on
// 127.0.0.1, a cert dir, leader election as in a real cluster) plus extra, and waits until
// /healthz answers.
func (c *Cluster) startServing(ctx context.Context, name, assets string, extra ...string) (*Component, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(c.Dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + c.KubeconfigPath,
		"--authentication-kubeconfig=" + c.KubeconfigPath,
		"--authorization-kubeconfig=" + c.KubeconfigPath,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + dir,
		// Leader election as clusters run it: a Lease in kube-system renewed every 2s (the
		// heartbeats `watch leases -n kube-system` shows). A lease lost ends the process, so
		// the deadlines are long: a starved test machine must not lose it.
		"--leader-elect=true",
		"--leader-elect-lease-duration=60s",
		"--leader-elect-renew-deadline=50s",
		"--leader-elect-retry-period=2s",
	}, extra...)
	p, err := c.startComponent(name, filepath.Join(assets, name), port, args...)
	if err != nil {
		return nil, err
	}
	return p, c.waitHealthy(ctx, p)
}

// AddNode creates a Node that kwok manages (kwok must be running: Options.Nodes > 0), with
// room for 110 pods and no taints, so ordinary pods are scheduled to it. It does not wait for
// it to become Ready.
func (c *Cluster) AddNode(ctx context.Context, name string) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("32"),
				corev1.ResourceMemory: resource.MustParse("256Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("32"),
				corev1.ResourceMemory: resource.MustParse("256Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
		},
	}
	_, err := c.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitHealthy polls the component's /healthz (always allowed without credentials) until it
// answers 200, failing early if the process exits.
func (c *Cluster) waitHealthy(ctx context.Context, p *Component) error {
	client := &http.Client{
		Timeout: 2 * time.Second,
		// The component's serving certificate is self-signed and made at start; only
		// liveness is read here, nothing is sent.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health check
	}
	defer client.CloseIdleConnections()
	err := waitFor(ctx, c.opts.StartTimeout, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("%s exited: %v", p.Name, err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL("/healthz"), nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%s not healthy on port %d: %w%s", p.Name, p.Port, err, tailOf(p))
	}
	return nil
}

func waitFor(ctx context.Context, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, cond)
}

func tailOf(p *Component) string {
	if s := p.Log(); s != "" {
		return fmt.Sprintf("\n--- %s output (tail) ---\n%s", p.Name, s)
	}
	return ""
}
