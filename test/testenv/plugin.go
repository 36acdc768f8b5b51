package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PluginName is the executable kubectl looks up for "kubectl informer".
const PluginName = "kubectl-informer"

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// NoRaceEnv names the environment variable that, set to anything, builds the tests' plugin
// without the race detector (to measure its cost, or where cgo is missing).
const NoRaceEnv = "KUBECTL_INFORMER_E2E_NORACE"

// BuildPlugin builds ./cmd/kubectl-informer once per process, with the race detector (unless
// NoRaceEnv is set), and returns the directory holding the kubectl-informer binary (to put first on PATH). It fails the
// test if the build fails. The directory lives in the system temp dir; call RemoveBuiltPlugin from TestMain to
// delete it.
func BuildPlugin(t testing.TB) string {
	t.Helper()
	dir, err := BuildPluginOnce(context.Background())
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return dir
}

// BuildPluginOnce is BuildPlugin without testing.TB.
func BuildPluginOnce(ctx context.Context) (string, error) {
	pluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubectl-informer-plugin-")
		if err != nil {
			pluginErr = err
			return
		}
		if _, err := buildPlugin(ctx, dir, os.Getenv(NoRaceEnv) == ""); err != nil {
			os.RemoveAll(dir)
			pluginErr = err
			return
		}
		pluginDir = dir
	})
	return pluginDir, pluginErr
}

// RemoveBuiltPlugin removes the directory made by BuildPlugin/BuildPluginOnce, if any.
func RemoveBuiltPlugin() {
	if pluginDir != "" {
		os.RemoveAll(pluginDir)
	}
}

// BuildPluginTo runs "go build -o dir/kubectl-informer ./cmd/kubectl-informer" in the module
// root and returns the binary's path (without the race detector: for demos).
func BuildPluginTo(ctx context.Context, dir string) (string, error) {
	return buildPlugin(ctx, dir, false)
}

// buildPlugin builds the plugin into dir; race adds the race detector, so that the end-to-end
// tests run the plugin's own goroutines (the outbox drainer, scrapers, the stdout watcher) under
// it: a race report on stderr fails the test (RunPlugin) and makes the exit code 66.
func buildPlugin(ctx context.Context, dir string, race bool) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, PluginName)
	args := []string{"build", "-o", bin}
	env := os.Environ()
	if race {
		// The race detector needs cgo (the Makefile turns it off for everything else); Go's own
		// linker, as make unit links (a dependency imports package plugin, which would otherwise
		// ask for the host's).
		args = append(args, "-race", "-ldflags=-linkmode=internal")
		env = append(env, "CGO_ENABLED=1")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/kubectl-informer")...)
	cmd.Dir = root
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s ./cmd/kubectl-informer: %w\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// RaceReport is what the race detector writes to stderr when it finds a data race.
const RaceReport = "WARNING: DATA RACE"

// Kubectl runs the machine's "kubectl <args...> --kubeconfig=<KubeconfigPath>" with PluginDir
// first on PATH and returns its stdout. The error includes stderr.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "kubectl", c.kubectlArgs(args)...)
	cmd.Env = c.Environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// Environ is os.Environ with PluginDir first on PATH, KUBECONFIG set to KubeconfigPath and
// a kubectl cache dir private to this cluster. Unless GORACE is set, the race-built plugin does
// not sleep its default second at exit (atexit_sleep_ms): that second, on each of the hundreds of
// runs, was most of what -race cost the end-to-end tests.
func (c *Cluster) Environ() []string {
	var env []string
	if _, ok := os.LookupEnv("GORACE"); !ok {
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "KUBECACHEDIR=") {
			env = append(env, kv)
		}
	}
	path := os.Getenv("PATH")
	if c.PluginDir != "" {
		path = c.PluginDir + string(os.PathListSeparator) + path
	}
	return append(env, "PATH="+path, "KUBECONFIG="+c.KubeconfigPath, "KUBECACHEDIR="+filepath.Join(c.Dir, "kubectl-cache"))
}

// kubectlArgs puts --kubeconfig after args (kubectl only finds a plugin when no flag precedes
// its name), but before a "--".
func (c *Cluster) kubectlArgs(args []string) []string {
	return withKubeconfig(args, c.KubeconfigPath)
}

func withKubeconfig(args []string, kubeconfig string) []string {
	flag := "--kubeconfig=" + kubeconfig
	for i, a := range args {
		if a == "--" {
			return append(append(append([]string{}, args[:i]...), flag), args[i:]...)
		}
	}
	return append(append([]string{}, args...), flag)
}

// PluginRun is a running "kubectl informer ..." whose stdout is split into lines.
type PluginRun struct {
	cmd    *exec.Cmd
	t      testing.TB
	stderr *TailBuffer

	mu      sync.Mutex
	lines   [][]byte
	partial []byte
	changed chan struct{} // closed and replaced on every new line and at exit
	next    int           // AwaitJSON cursor
	done    chan struct{} // closed when the process has exited and output is drained
	exited  bool          // done is closed (under mu)
	code    int
	waitErr error

	linesOnce sync.Once
	linesCh   chan []byte
	closed    chan struct{} // closed by cleanup
}

// RunPlugin starts "kubectl informer <args...> --kubeconfig=<KubeconfigPath>" (building the
// plugin first if PluginDir is empty). The process is killed, by process group id, when the
// test ends or ctx is done. If the test failed, its stderr and last lines are logged.
func (c *Cluster) RunPlugin(t testing.TB, ctx context.Context, args ...string) *PluginRun {
	t.Helper()
	return c.RunPluginAs(t, ctx, c.KubeconfigPath, args...)
}

// RunPluginAs is RunPlugin with another kubeconfig (another user of this cluster).
func (c *Cluster) RunPluginAs(t testing.TB, ctx context.Context, kubeconfig string, args ...string) *PluginRun {
	t.Helper()
	c.ensurePlugin(t)
	return c.startPlugin(t, ctx, withKubeconfig(append([]string{"informer"}, args...), kubeconfig), c.Environ())
}

// RunPluginWith is RunPlugin with env (NAME=value entries) added to its environment, each
// replacing the variable of that name.
func (c *Cluster) RunPluginWith(t testing.TB, ctx context.Context, env []string, args ...string) *PluginRun {
	t.Helper()
	c.ensurePlugin(t)
	var all []string
	for _, kv := range c.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			all = append(all, kv)
		}
	}
	return c.startPlugin(t, ctx, withKubeconfig(append([]string{"informer"}, args...), c.KubeconfigPath), append(all, env...))
}

// RunPluginEnv is RunPlugin with no --kubeconfig flag and KUBECONFIG set to kubeconfigEnv (a
// list of files, as kubectl reads it).
func (c *Cluster) RunPluginEnv(t testing.TB, ctx context.Context, kubeconfigEnv string, args ...string) *PluginRun {
	t.Helper()
	c.ensurePlugin(t)
	var env []string
	for _, kv := range c.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return c.startPlugin(t, ctx, append([]string{"informer"}, args...), append(env, "KUBECONFIG="+kubeconfigEnv))
}

// ensurePlugin builds the plugin into PluginDir when it is empty.
func (c *Cluster) ensurePlugin(t testing.TB) {
	t.Helper()
	if c.PluginDir == "" {
		c.PluginDir = BuildPlugin(t)
	}
}

// startPlugin starts kubectl with argv ("informer", ...) and env; see RunPlugin.
func (c *Cluster) startPlugin(t testing.TB, ctx context.Context, argv, env []string) *PluginRun {
	t.Helper()
	args := argv[1:] // for messages: what follows "informer"
	cmd := exec.CommandContext(ctx, "kubectl", argv...)
	cmd.Env = env
	// Own process group, so that killing it also gets anything the plugin started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	p := &PluginRun{
		cmd: cmd, t: t, stderr: NewTailBuffer(1 << 20),
		changed: make(chan struct{}), done: make(chan struct{}), closed: make(chan struct{}),
	}
	cmd.Stdout = lineWriter{p}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start kubectl informer: %v", err)
	}
	c.wd.refresh()
	go func() {
		p.wait()
		c.wd.refresh()
	}()
	t.Cleanup(func() {
		close(p.closed)
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		if strings.Contains(p.Stderr(), RaceReport) {
			t.Errorf("kubectl informer %s: the race detector found a data race (stderr below)", strings.Join(args, " "))
		}
		if t.Failed() {
			t.Logf("kubectl informer %s: exit %d; stderr:\n%s\nlast stdout lines:\n%s",
				strings.Join(args, " "), p.code, p.Stderr(), p.tail(20))
		}
	})
	return p
}

func (p *PluginRun) wait() {
	err := p.cmd.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.partial) > 0 {
		p.lines = append(p.lines, p.partial)
		p.partial = nil
	}
	p.code = p.cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		p.waitErr = err
	} else if p.code < 0 {
		p.waitErr = fmt.Errorf("kubectl informer: %s", p.cmd.ProcessState)
	}
	p.exited = true
	close(p.changed)
	close(p.done)
}

type lineWriter struct{ p *PluginRun }

func (w lineWriter) Write(b []byte) (int, error) {
	p := w.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	added := false
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		p.lines = append(p.lines, bytes.TrimSuffix(p.partial[:i:i], []byte("\r")))
		p.partial = append([]byte(nil), p.partial[i+1:]...)
		added = true
	}
	if added {
		close(p.changed)
		p.changed = make(chan struct{})
	}
	return len(b), nil
}

// Pid is the process id (kubectl execs the plugin in place, so it is the plugin's too).
func (p *PluginRun) Pid() int { return p.cmd.Process.Pid }

// All returns a copy of every stdout line so far.
func (p *PluginRun) All() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.lines...)
}

// Stderr returns the stderr so far (last MiB).
func (p *PluginRun) Stderr() string { return p.stderr.String() }

// Signal sends sig to the process.
func (p *PluginRun) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed when the process has exited.
func (p *PluginRun) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns its exit code (-1 if killed by a signal).
// err is set if it could not be waited for or was killed by a signal.
func (p *PluginRun) Wait() (exitCode int, err error) {
	<-p.done
	return p.code, p.waitErr
}

// Lines streams every stdout line from the first, and is closed after the last one once the
// process has exited. It is independent of AwaitJSON.
func (p *PluginRun) Lines() <-chan []byte {
	p.linesOnce.Do(func() {
		p.linesCh = make(chan []byte)
		go func() {
			defer close(p.linesCh)
			for i := 0; ; i++ {
				line, ok := p.lineAt(i)
				if !ok {
					return
				}
				select {
				case p.linesCh <- line:
				case <-p.closed:
					return
				}
			}
		}()
	})
	return p.linesCh
}

// lineAt blocks until line i exists (true) or the process has exited without it (false).
func (p *PluginRun) lineAt(i int) ([]byte, bool) {
	for {
		p.mu.Lock()
		if i < len(p.lines) {
			line := p.lines[i]
			p.mu.Unlock()
			return line, true
		}
		changed, exited := p.changed, p.exited
		p.mu.Unlock()
		if exited {
			return nil, false
		}
		select {
		case <-changed:
		case <-p.closed:
			return nil, false
		}
	}
}

// AwaitJSON returns the first stdout line after the previous AwaitJSON match that parses as
// a JSON object satisfying pred (pred nil: any object). Other lines are skipped but stay in
// All. It fails the test on timeout or if the process exits first.
func (p *PluginRun) AwaitJSON(t testing.TB, timeout time.Duration, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		for p.next < len(p.lines) {
			line := p.lines[p.next]
			p.next++
			var obj map[string]any
			if json.Unmarshal(line, &obj) == nil && obj != nil && (pred == nil || pred(obj)) {
				p.mu.Unlock()
				return obj
			}
		}
		changed, exited := p.changed, p.exited
		p.mu.Unlock()
		if exited {
			t.Fatalf("kubectl informer exited (code %d) before a matching JSON line\nstderr:\n%s\nlast lines:\n%s",
				p.code, p.Stderr(), p.tail(20))
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no matching JSON line from kubectl informer within %s\nstderr:\n%s\nlast lines:\n%s",
				timeout, p.Stderr(), p.tail(20))
		}
	}
}

func (p *PluginRun) tail(n int) string {
	all := p.All()
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return string(bytes.Join(all, []byte("\n")))
}
