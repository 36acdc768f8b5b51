package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM ends a run like SIGINT: the summary on stderr and exit 0.
func TestSIGTERM(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json")
	p.AwaitJSON(t, await, is("Synced", ""))
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait()
	if err != nil || code != 0 {
		t.Errorf("after SIGTERM: exit %d, %v", code, err)
	}
	if !strings.HasPrefix(p.Stderr(), "--- kubectl informer: summary") {
		t.Errorf("stderr: %q", p.Stderr())
	}
}

// `| head -1`: once the reader is gone the plugin ends by itself, quietly, even when no event
// would make it write again.
func TestClosedStdout(t *testing.T) {
	ns := newNamespace(t, cluster)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", "informer", "watch", "cm", "-n", ns)
	cmd.Env = cluster.Environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	first, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, "# watching configmaps") {
		t.Errorf("first line %q", first)
	}
	// Read on to the Synced line: the namespace is empty, so nothing more is written and only
	// noticing the reader leave can end the run.
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "  Synced  ") {
			break
		}
	}
	// What head does after its lines.
	stdout.Close()
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("the plugin kept running after its reader went away")
	}
	if err != nil {
		t.Errorf("exit: %v (want 0)", err)
	}
	if stderr.String() != "" {
		t.Errorf("not quiet: stderr %q", stderr.String())
	}
}
