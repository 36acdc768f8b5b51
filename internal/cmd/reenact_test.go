package cmd

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// reenact writes: it never runs on the current context, only on one named with --context.
func TestReenactValidate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no context", []string{"rec.ndjson"}, "name its context with --context"},
		{"bad map", []string{"rec.ndjson", "--context", "dev", "--namespace-map", "demo"}, "want FROM=TO"},
		{"bad speed", []string{"rec.ndjson", "--context", "dev", "--speed", "-2"}, "--speed must be"},
		{"bad settle", []string{"rec.ndjson", "--context", "dev", "--settle", "-1s"}, "--settle must be"},
		{"bad output", []string{"rec.ndjson", "--context", "dev", "-o", "xml"}, "xml"},
		{"server dry run", []string{"rec.ndjson", "--context", "dev", "--dry-run=server"}, "--dry-run=server is not supported"},
		{"bad dry run", []string{"rec.ndjson", "--context", "dev", "--dry-run=all"}, `--dry-run must be "none" or "client"`},
		{"dry run of a cleanup", []string{"rec.ndjson", "--context", "dev", "--dry-run", "--cleanup"}, "--dry-run with --cleanup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			streams := genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}
			cf := genericclioptions.NewConfigFlags(true)
			c := NewCmdReenact(cf, streams)
			cf.AddFlags(c.PersistentFlags())
			c.SetArgs(tt.args)
			c.SilenceErrors, c.SilenceUsage = true, true
			err := c.Execute()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}
