package cmd

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// replay and report read a file: their help leaves out the cluster flags (replay keeps -n,
// which filters the recording); watch keeps them all.
func TestHelpWithoutClusterFlags(t *testing.T) {
	tests := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"replay", "--help"}, []string{"--namespace"}, []string{"--kubeconfig", "--server", "--token"}},
		{[]string{"report", "--help"}, nil, []string{"--kubeconfig", "--server", "--namespace"}},
		{[]string{"watch", "--help"}, []string{"--kubeconfig", "--server", "--namespace"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			var out bytes.Buffer
			root := NewCmdInformer(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
			root.SetArgs(tt.args)
			root.SetOut(&out)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("help lacks %s", w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("help lists %s", n)
				}
			}
		})
	}
}

// -n completes namespaces, never file names.
func TestNamespaceCompletion(t *testing.T) {
	root := NewCmdInformer(genericiooptions.NewTestIOStreamsDiscard())
	fn, ok := root.GetFlagCompletionFunc("namespace")
	if !ok {
		t.Fatal("no completion for -n")
	}
	t.Setenv("KUBECONFIG", "/nonexistent")
	if _, dir := fn(root, nil, ""); dir != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("directive %v, want no file completion", dir)
	}
}

// A connection error keeps its hint through ErrorLine's kubectl wording.
func TestErrorLineKeepsHint(t *testing.T) {
	err := &hintError{err: &url.Error{Op: "Get", URL: "http://localhost:8080/api", Err: errors.New("dial tcp 127.0.0.1:8080: connect: connection refused")}, hint: "no kubeconfig found"}
	want := "error: Unable to connect to the server: dial tcp 127.0.0.1:8080: connect: connection refused (no kubeconfig found)"
	if got := ErrorLine(err); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
