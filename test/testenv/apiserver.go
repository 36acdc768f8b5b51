package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// StopAPIServer stops the (first) API server, leaving etcd and any second API server running.
// Its port, certificates and client CA are kept for RestartAPIServer, so KubeconfigPath,
// RESTConfig and the clients stay valid. Stopping a stopped server is a no-op.
func (c *Cluster) StopAPIServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.apiStopped {
		return nil
	}
	c.apiStopped = true
	defer c.wd.refresh()
	return c.Env.ControlPlane.APIServer.Stop()
}

// KillAPIServer crashes the (first) API server with SIGKILL, as a node failure would: open
// watches are cut without a graceful shutdown (which would wait for them). It is then
// stopped as StopAPIServer leaves it, ready for RestartAPIServer.
func (c *Cluster) KillAPIServer() error {
	c.mu.Lock()
	if c.stopped || c.apiStopped {
		c.mu.Unlock()
		return nil
	}
	api := c.Env.ControlPlane.APIServer
	var killed bool
	for _, pid := range childrenMentioning(api.CertDir) {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		// Exactly this server: a second one's cert dir may share the first's as a prefix.
		if strings.Contains(string(cmdline), "kube-apiserver") && strings.Contains(string(cmdline), "--cert-dir="+api.CertDir+"\x00") {
			if err := syscall.Kill(-pid, syscall.SIGKILL); err == nil {
				killed = true
			}
		}
	}
	c.mu.Unlock()
	if !killed {
		return errors.New("testenv: no kube-apiserver process found to kill")
	}
	// Reap it through envtest, which now finds it gone at once.
	return c.StopAPIServer()
}

// RestartAPIServer starts the API server stopped by StopAPIServer again, on the same address
// with the same certificates, and waits until it is ready and serves the CRDs installed
// through InstallCRD.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return errors.New("testenv: cluster stopped")
	}
	if !c.apiStopped {
		c.mu.Unlock()
		return errors.New("testenv: API server is running; call StopAPIServer first")
	}
	api := c.Env.ControlPlane.APIServer
	// envtest's APIServer.Start re-uses CertDir (ours, so never removed), the chosen
	// SecureServing address and port, and the Authn (same client CA) of the first start.
	err := api.Start()
	c.wd.refresh()
	if err == nil {
		c.apiStopped = false
	}
	crds := c.crds
	c.mu.Unlock()
	if err != nil {
		_ = api.Stop()
		return fmt.Errorf("restart kube-apiserver on %s: %w%s", api.SecureServing.HostPort(), err, c.logTails())
	}
	if err := waitReady(ctx, c.RESTConfig, c.opts.StartTimeout); err != nil {
		return fmt.Errorf("kube-apiserver not ready after restart: %w", err)
	}
	for _, crd := range crds {
		if err := waitCRDServed(ctx, c.RESTConfig, crd); err != nil {
			return err
		}
	}
	return nil
}

// APIServerHandle is an additional kube-apiserver on the cluster's etcd.
type APIServerHandle struct {
	Server         *envtest.APIServer
	KubeconfigPath string
	RESTConfig     *rest.Config
	Clientset      kubernetes.Interface
	Dynamic        dynamic.Interface

	dir    string
	log    *TailBuffer
	once   sync.Once
	err    error
	onStop func()
}

// URL is the https URL of this API server.
func (h *APIServerHandle) URL() string { return h.Server.SecureServing.URL("https", "/").String() }

// Log returns the tail of this API server's output.
func (h *APIServerHandle) Log() string { return h.log.String() }

// Stop stops this API server by its process (group) id and removes its directory. Idempotent.
func (h *APIServerHandle) Stop() error {
	h.once.Do(func() {
		h.err = errors.Join(h.Server.Stop(), os.RemoveAll(h.dir))
		h.onStop()
	})
	return h.err
}

// StartSecondAPIServer starts another kube-apiserver on the same etcd, on its own port on
// 127.0.0.1. It is a replica of the first: same serving certificate and CA, same client CA
// (so the first's RESTConfig works against it after changing Host) and same service-account
// keys and issuer. It runs with --endpoint-reconciler-type=none so the two servers do not
// fight over the "kubernetes" Endpoints. Cluster.Stop stops it too.
func (c *Cluster) StartSecondAPIServer(ctx context.Context) (*APIServerHandle, error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, errors.New("testenv: cluster stopped")
	}
	first := c.Env.ControlPlane.APIServer
	dir, err := os.MkdirTemp(c.Dir, "apiserver-")
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"apiserver.crt", "apiserver.key", "sa-signer.crt", "sa-signer.key"} {
		if err := copyFile(filepath.Join(first.CertDir, f), filepath.Join(dir, f)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("copy %s of the first API server: %w", f, err)
		}
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	h := &APIServerHandle{dir: dir, log: newTail(64 << 10), onStop: c.wd.refresh}
	s := &envtest.APIServer{
		Path:         first.Path,
		CertDir:      dir,
		EtcdURL:      first.EtcdURL,
		StartTimeout: first.StartTimeout,
		StopTimeout:  first.StopTimeout,
		Out:          h.log,
		Err:          h.log,
	}
	if w := c.opts.ControlPlaneOutput; w != nil {
		s.Out, s.Err = w, w
	}
	s.SecureServing.Address = "127.0.0.1"
	s.SecureServing.Port = strconv.Itoa(port)
	// apiserver.crt exists in dir, so envtest keeps it and does not set CA itself.
	s.SecureServing.CA = first.SecureServing.CA
	s.SecureServing.Authn = &sharedAuthn{
		first:  first.SecureServing.Authn,
		caFile: firstArg(first.Configure(), "client-ca-file"),
	}
	for k, v := range c.opts.APIServerFlags {
		s.Configure().Set(k, v)
	}
	s.Configure().Set("service-account-issuer", first.SecureServing.URL("https", "/").String())
	s.Configure().Set("endpoint-reconciler-type", "none")
	h.Server = s
	err = s.Start()
	c.wd.refresh()
	if err != nil {
		_ = h.Stop()
		return nil, fmt.Errorf("start second kube-apiserver: %w\n--- output (tail) ---\n%s", err, h.Log())
	}
	c.mu.Lock()
	c.extra = append(c.extra, h)
	crds := c.crds
	stopped := c.stopped
	c.mu.Unlock()
	if stopped { // Stop raced with us
		return nil, errors.Join(errors.New("testenv: cluster stopped"), h.Stop())
	}

	plane := &envtest.ControlPlane{APIServer: s}
	user, err := plane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, &rest.Config{QPS: 1000, Burst: 2000})
	if err != nil {
		return nil, err
	}
	h.RESTConfig = user.Config()
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	h.KubeconfigPath = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(h.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	if h.Clientset, err = kubernetes.NewForConfig(h.RESTConfig); err != nil {
		return nil, err
	}
	if h.Dynamic, err = dynamic.NewForConfig(h.RESTConfig); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, h.RESTConfig, c.opts.StartTimeout); err != nil {
		return nil, fmt.Errorf("second kube-apiserver not ready: %w", err)
	}
	for _, crd := range crds {
		if err := waitCRDServed(ctx, h.RESTConfig, crd); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// sharedAuthn makes a second API server trust the client CA of the first and provisions
// users through the first's authenticator.
type sharedAuthn struct {
	first  envtest.Authn
	caFile string
}

func (a *sharedAuthn) Configure(_ string, args *envtest.Arguments) error {
	if a.caFile == "" {
		return errors.New("testenv: first API server has no client-ca-file")
	}
	args.Set("client-ca-file", a.caFile)
	return nil
}
func (a *sharedAuthn) Start() error { return nil }
func (a *sharedAuthn) AddUser(u envtest.User, base *rest.Config) (*rest.Config, error) {
	return a.first.AddUser(u, base)
}
func (a *sharedAuthn) Stop() error { return nil }

func firstArg(args *envtest.Arguments, name string) string {
	if v := args.Get(name).Get(nil); len(v) > 0 {
		return v[0]
	}
	return ""
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}
