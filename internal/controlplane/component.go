package controlplane

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

	"k8s.io/apimachinery/pkg/util/wait"
)

// Component names, as ControlPlane.Component takes them.
const (
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kwok              = "kwok"
)

// Component is a process started beside the API server: kube-controller-manager,
// kube-scheduler, kwok, or a controller of the caller's. It runs in a process group of its
// own and is stopped by its id.
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
	// logFiles are the copies of its output (LogFile), closed when it exits.
	logFiles []*os.File
}

// LogFile is a file a component's whole output is also appended to; Wrap, if set, encodes it
// (e.g. as a kubelet keeps a container's log).
type LogFile struct {
	Path string
	Wrap func(io.Writer) io.Writer
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

// Log returns the tail of the component's output (empty if Options.Output is set).
func (p *Component) Log() string { return p.log.String() }

// Tail is the tail of the component's output, for an error message ("" when there is none).
func (p *Component) Tail() string {
	if s := p.Log(); s != "" {
		return fmt.Sprintf("\n--- %s output (tail) ---\n%s", p.Name, s)
	}
	return ""
}

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

// Stop sends SIGTERM to the component's process group, waits for it (up to the control
// plane's StopTimeout) and then kills the group. Idempotent.
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

// StartComponent runs bin with args in its own process group, its output kept in a tail
// buffer (or sent to Options.Output) and appended to logs, or, when logs names no plain file,
// to Options.LogDir/NAME.log. Stop stops it.
func (cp *ControlPlane) StartComponent(name, bin string, port int, logs []LogFile, args ...string) (*Component, error) {
	return cp.StartComponentEnv(name, bin, port, logs, nil, args...)
}

// StartComponentEnv is StartComponent with env (KEY=VALUE) added to this process's environment,
// for a controller that reads its settings from there (Karpenter reads KUBECONFIG).
func (cp *ControlPlane) StartComponentEnv(name, bin string, port int, logs []LogFile, env []string, args ...string) (*Component, error) {
	if cp.opts.LogDir != "" && !hasPlainFile(logs) {
		logs = append(logs, LogFile{Path: filepath.Join(cp.opts.LogDir, name+".log")})
	}
	p := &Component{Name: name, Port: port, log: NewTailBuffer(64 << 10), done: make(chan struct{}), stop: cp.opts.StopTimeout}
	p.cmd = exec.Command(bin, args...)
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out io.Writer = p.log
	if w := cp.opts.Output; w != nil {
		out = w
	}
	for _, l := range logs {
		if l.Path == "" {
			continue
		}
		f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			p.closeLogs()
			return nil, err
		}
		p.logFiles = append(p.logFiles, f)
		var w io.Writer = f
		if l.Wrap != nil {
			w = l.Wrap(f)
		}
		out = io.MultiWriter(out, w)
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		p.closeLogs()
		return nil, errors.New("controlplane: stopped")
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
	cp.components = append(cp.components, p)
	cp.notify()
	return p, nil
}

func hasPlainFile(logs []LogFile) bool {
	for _, l := range logs {
		if l.Path != "" && l.Wrap == nil {
			return true
		}
	}
	return false
}

// Component returns the running component called name (ControllerManager, Scheduler, Kwok),
// or nil when the control plane was started without it.
func (cp *ControlPlane) Component(name string) *Component {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.components {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// WaitHealthy polls the component's /healthz over https (always allowed without credentials)
// until it answers 200, failing early if the process exits.
func (cp *ControlPlane) WaitHealthy(ctx context.Context, p *Component) error {
	client := &http.Client{
		Timeout: 2 * time.Second,
		// The component's serving certificate is self-signed and made at start; only
		// liveness is read here, nothing is sent.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health check
	}
	defer client.CloseIdleConnections()
	err := cp.WaitFor(ctx, func(ctx context.Context) (bool, error) {
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
		return fmt.Errorf("%s not healthy on port %d: %w%s", p.Name, p.Port, err, p.Tail())
	}
	return nil
}

// WaitFor polls cond every 100ms until it holds, fails, or Options.StartTimeout passes.
func (cp *ControlPlane) WaitFor(ctx context.Context, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, cp.opts.StartTimeout, true, cond)
}
