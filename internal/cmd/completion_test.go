package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// runRoot runs the root command with args, offline: an empty kubeconfig and a server nothing
// listens on.
func runRoot(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv("KUBECACHEDIR", t.TempDir())
	var out, errb bytes.Buffer
	// NewCmdInformer registers klog's flags, once per process: build the same tree without it.
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}
	configFlags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{Use: "informer", SilenceErrors: true, SilenceUsage: true}
	configFlags.AddFlags(root.PersistentFlags())
	root.AddCommand(NewCmdWatch(configFlags, streams), NewCmdCompletion(streams))
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "__start_kubectl-informer",
		"zsh":        "#compdef kubectl-informer",
		"fish":       "complete -c kubectl-informer",
		"powershell": "Register-ArgumentCompleter -CommandName 'kubectl-informer'",
	} {
		out, _, err := runRoot(t, "completion", shell)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("completion %s: %v; output lacks %q:\n%.300s", shell, err, want, out)
		}
	}
	if _, _, err := runRoot(t, "completion", "tcsh"); err == nil || !strings.Contains(err.Error(), `invalid argument "tcsh"`) {
		t.Errorf("completion tcsh: %v", err)
	}
}

// Completion never hangs on a server it cannot reach, and still completes the flags.
func TestCompleteOffline(t *testing.T) {
	start := time.Now()
	out, _, err := runRoot(t, "__complete", "watch", "--server", "https://127.0.0.1:1", "de")
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*completionTimeout {
		t.Errorf("completion took %s", time.Since(start))
	}
	if !strings.HasSuffix(strings.TrimSpace(out), ":4") { // ShellCompDirectiveNoFileComp
		t.Errorf("offline completion: %q", out)
	}
	out, _, _ = runRoot(t, "__complete", "watch", "cm", "--diff=")
	for _, want := range []string{"inline\n", "full\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--diff completion lacks %q: %q", want, out)
		}
	}
	out, _, _ = runRoot(t, "__complete", "watch", "cm", "-o", "")
	for _, want := range []string{"yaml\n", "wide\n", "jsonpath=\n", "go-template=\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("-o completion lacks %q: %q", want, out)
		}
	}
}

// B12: names from the server with a terminal escape, a CR, a NUL or a shell metacharacter are
// not offered as completions.
func TestShellSafe(t *testing.T) {
	in := []string{"web", "system:controller:x", "evil\x1b]52;c;x\x07name", "cr\rOVERWRITTEN", "nul\x00name",
		"$(touch PWNED2)", "`id`", "x; touch PWNED #", "a b", "clusterroles/ok-1.2"}
	got := shellSafe(in)
	want := []string{"web", "system:controller:x", "clusterroles/ok-1.2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("shellSafe = %q, want %q", got, want)
	}
}
