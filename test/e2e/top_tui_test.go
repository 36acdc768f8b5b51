package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// tmuxSession is a terminal a test types into and reads, as a user sees it: its own tmux server
// (socket), killed at cleanup.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T, env []string, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not on PATH: make e2e installs it (make tmux: hack/need.sh); a skipped terminal test would pass without testing anything")
	}
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	var exports []string
	for _, e := range env {
		if k, v, ok := strings.Cut(e, "="); ok && (k == "KUBECONFIG" || k == "PATH" || k == "HOME") {
			exports = append(exports, k+"="+shellQuote(v))
		}
	}
	// After the program exits, its exit code stays on the screen with what it printed.
	script := "env " + strings.Join(exports, " ") + " TERM=xterm-256color " + command + "; echo EXIT=$?; sleep 600"
	s.run("new-session", "-d", "-s", "top", "-x", "200", "-y", "50", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// keys types keys (tmux send-keys names: Enter, Escape, Down, or text).
func (s *tmuxSession) keys(keys ...string) {
	s.run(append([]string{"send-keys", "-t", "top"}, keys...)...)
}

func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "top") }

// scrollback is the screen with the lines that scrolled off it.
func (s *tmuxSession) scrollback() string { return s.run("capture-pane", "-p", "-t", "top", "-S", "-") }

// await polls the screen until ok holds, failing with the last screen and what never came.
func (s *tmuxSession) await(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(await)
	for {
		sc := s.screen()
		if ok(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("never on the screen within %s: %s; the screen:\n%s", await, what, sc)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// fightFix is the fight's diagnosis under its row: who takes turns at which field, and the fix.
var fightFix = regexp.MustCompile(`fight: \S+ and \S+ take turns at spec\.replicas; fix: let only one of them write it`)

// The live table on a terminal, driven as a user would: the fight shows in the first rows with
// its diagnosis; filtered to it, Enter shows its history with the flipping field and both
// writers; Esc goes back; q quits with exit 0, the terminal back from the alternate screen, and
// the final ranking with the drill-in command printed.
func TestRealTopTerminal(t *testing.T) {
	c, ns := withOperator(t)
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fought", Size: 1, Bug: "fight"})
	s := startTmux(t, c.Environ(), "kubectl informer top --window 30s --interval 1s")

	fightRow := regexp.MustCompile(`(?m)^\s*[123]\s+replicasets\.apps\s+` + regexp.QuoteMeta(ns) + `/fought-\S+.*\bfight\b`)
	sc := s.await("the fight in the first three rows", fightRow.MatchString)
	t.Logf("the table:\n%s", sc)
	if !fightFix.MatchString(sc) {
		t.Errorf("no fix under the fight's row:\n%s", sc)
	}

	s.keys("/", "fight", "Enter")
	s.await("the filter applied", func(sc string) bool {
		return strings.Contains(sc, "filter: fight") && !strings.Contains(sc, "filter: fight_")
	})
	s.keys("Enter")
	history := s.await("the fight's history with spec.replicas flipping between both writers", func(sc string) bool {
		return strings.Contains(sc, "history of replicasets.apps "+ns+"/fought-") && strings.Count(sc, "spec.replicas: ") >= 2 &&
			strings.Contains(sc, "widget-operator") && strings.Contains(sc, "kube-controller-manager")
	})
	t.Logf("the history:\n%s", history)

	s.keys("Escape")
	s.await("the table again", func(sc string) bool { return strings.Contains(sc, "1 objects") && fightRow.MatchString(sc) })

	s.keys("q")
	s.await("the exit", func(sc string) bool { return strings.Contains(sc, "EXIT=") })
	final := s.scrollback()
	t.Logf("after q:\n%s", final)
	if !strings.Contains(final, "EXIT=0") {
		t.Errorf("exit code not 0:\n%s", final)
	}
	if !strings.Contains(final, "final ranking:") || !strings.Contains(final, "kubectl informer watch replicasets.apps fought-") {
		t.Errorf("no final ranking with the drill-in command after q:\n%s", final)
	}
	if alt := strings.TrimSpace(s.run("display-message", "-p", "-t", "top", "#{alternate_on}")); alt != "0" {
		t.Errorf("the terminal is still in the alternate screen (alternate_on=%s)", alt)
	}
	if mode := strings.TrimSpace(s.run("display-message", "-p", "-t", "top", "#{cursor_flag}")); mode != "1" {
		t.Errorf("the cursor is still hidden (cursor_flag=%s)", mode)
	}
}

// A ClusterRole whose name holds a window-title sequence (OSC 0) and a command separator, written
// again and again so that top ranks it: drilling into it on a terminal leaves the terminal's
// title as it was (the drill's title showed the name raw), and the drill-in command printed
// after q quotes the name as one shell word.
func TestTopTerminalHostileName(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	name := "tui; touch PWNED #\x1b]0;PWNTITLE\x07x"
	roles := cluster.Clientset.RbacV1().ClusterRoles()
	if _, err := roles.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = roles.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	written := make(chan struct{})
	go func() {
		defer close(written)
		for i := 0; ctx.Err() == nil; i++ {
			patch := fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}}}`, i)
			if _, err := roles.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
				t.Errorf("patch: %v", err)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	defer func() { cancel(); <-written }()

	s := startTmux(t, cluster.Environ(), "kubectl informer top clusterroles --window 30s --interval 1s")
	s.run("select-pane", "-t", "top", "-T", "CLEANTITLE")
	title := func() string { return strings.TrimSpace(s.run("display-message", "-p", "-t", "top", "#{pane_title}")) }
	s.await("the role in the table, escaped", func(sc string) bool { return strings.Contains(sc, `tui; touch PWNED #^[]0;PWNTITLE\x07x`) })
	s.keys("/", "touch", "Enter")
	s.await("the filter applied", func(sc string) bool {
		return strings.Contains(sc, "filter: touch") && !strings.Contains(sc, "filter: touch_")
	})
	s.keys("Enter")
	drill := s.await("the role's history", func(sc string) bool {
		return strings.Contains(sc, `history of clusterroles.rbac.authorization.k8s.io tui; touch PWNED #^[]0;PWNTITLE\x07x (live)`)
	})
	t.Logf("the drill:\n%s", drill)
	if got := title(); got != "CLEANTITLE" {
		t.Errorf("the terminal's title is %q after drilling in, want it unchanged (CLEANTITLE)", got)
	}
	s.keys("q")
	s.await("the exit", func(sc string) bool { return strings.Contains(sc, "EXIT=") })
	final := s.scrollback()
	t.Logf("after q:\n%s", final)
	if want := `kubectl informer watch clusterroles.rbac.authorization.k8s.io 'tui; touch PWNED #^[]0;PWNTITLE\x07x' --diff`; !strings.Contains(final, want) {
		t.Errorf("no shell-quoted drill-in command %q after q:\n%s", want, final)
	}
	if got := title(); got != "CLEANTITLE" {
		t.Errorf("the terminal's title is %q after q, want it unchanged (CLEANTITLE)", got)
	}
}
