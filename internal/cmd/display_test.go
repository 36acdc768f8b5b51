package cmd

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

func TestDisplayFlagsValidate(t *testing.T) {
	tests := []struct {
		name    string
		set     func(d *DisplayFlags)
		wantErr string
	}{
		{name: "defaults", set: func(*DisplayFlags) {}},
		{name: "every valid value", set: func(d *DisplayFlags) {
			d.Output, d.Color, d.Diff, d.Timestamps, d.HotLoopUpdates = "wide", "never", "full", "relative", 0
			d.Types, d.Predicates = []string{"updated"}, []string{"generation"}
		}},
		{name: "template", set: func(d *DisplayFlags) { d.Output = "jsonpath={.type}" }},
		{name: "bad output", set: func(d *DisplayFlags) { d.Output = "table" }, wantErr: `unable to match a printer suitable for the output format "table"`},
		{name: "bad template", set: func(d *DisplayFlags) { d.Output = "jsonpath={.type" }, wantErr: "error parsing jsonpath {.type, unclosed action"},
		{name: "bad color", set: func(d *DisplayFlags) { d.Color = "yes" }, wantErr: `--color must be one of auto, always, never; got "yes"`},
		{name: "bad diff", set: func(d *DisplayFlags) { d.Diff = "side" }, wantErr: `--diff must be inline or full, got "side"`},
		{name: "bad timestamps", set: func(d *DisplayFlags) { d.Timestamps = "utc" }, wantErr: `--timestamps must be one of absolute, relative, none; got "utc"`},
		{name: "negative hot-loop-updates", set: func(d *DisplayFlags) { d.HotLoopUpdates = -1 }, wantErr: "--hot-loop-updates must be >= 0, got -1"},
		{name: "zero hot-loop-window", set: func(d *DisplayFlags) { d.HotLoopWindow = 0 }, wantErr: "--hot-loop-window must be > 0, got 0s"},
		{name: "unknown type", set: func(d *DisplayFlags) { d.Types = []string{"Teleported"} }, wantErr: `unknown type "Teleported" in --types`},
		{name: "unknown predicate", set: func(d *DisplayFlags) { d.Predicates = []string{"vibes"} }, wantErr: "vibes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDisplayFlags()
			tt.set(d)
			err := d.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The flags reach the printer's options; naming Bookmark or Reconciled in --types shows them.
func TestDisplayFlagsToOptions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want printer.Options
	}{
		{name: "defaults", want: printer.Options{Timestamps: "absolute"}},
		{name: "every flag", args: []string{"-o", "wide", "--color", "always", "--show-bookmarks", "--show-secrets", "--show-reconciles", "--diff", "--timestamps", "none", "--no-headers"},
			want: printer.Options{Output: printer.OutputWide, Color: true, ShowBookmarks: true, ShowSecrets: true, ShowReconciles: true, Diff: "inline", Timestamps: "none", NoHeaders: true}},
		{name: "types name hidden lines", args: []string{"--types", "bookmark,RECONCILED", "--color", "never"},
			want: printer.Options{ShowBookmarks: true, ShowReconciles: true, Timestamps: "absolute"}},
		{name: "color auto: not a terminal", args: []string{"--color", "auto", "-o", "json"}, want: printer.Options{Output: printer.OutputJSON, Timestamps: "absolute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDisplayFlags()
			cmd := &cobra.Command{Use: "x"}
			d.AddFlags(cmd)
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			got := d.ToOptions(io.Discard, nil)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b io.Writer) bool { return a == b })); diff != "" {
				t.Errorf("ToOptions (-want +got):\n%s", diff)
			}
		})
	}
}

// Every flag is registered once, with the same default, on watch and replay.
func TestDisplayFlagsShared(t *testing.T) {
	streams, flags := genericiooptions.NewTestIOStreamsDiscard(), genericclioptions.NewConfigFlags(true)
	w, r := NewCmdWatch(flags, streams), NewCmdReplay(flags, streams)
	for name := range displayUsage {
		wf, rf := w.Flags().Lookup(name), r.Flags().Lookup(name)
		if wf == nil || rf == nil {
			t.Fatalf("--%s: on watch %v, on replay %v", name, wf != nil, rf != nil)
		}
		if wf.DefValue != rf.DefValue || wf.NoOptDefVal != rf.NoOptDefVal || wf.Shorthand != rf.Shorthand {
			t.Errorf("--%s: watch default %q/%q -%s, replay %q/%q -%s", name, wf.DefValue, wf.NoOptDefVal, wf.Shorthand, rf.DefValue, rf.NoOptDefVal, rf.Shorthand)
		}
	}
	d := NewDisplayFlags()
	if d.HotLoopUpdates != 10 || d.HotLoopWindow != 30*time.Second || d.Color != "auto" || d.Timestamps != "absolute" {
		t.Errorf("defaults: %+v", d)
	}
	if d.types != nil {
		t.Errorf("no --types keeps types %v", d.types)
	}
}
