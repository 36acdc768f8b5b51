package cmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"

	"k8s.io/kubectl/pkg/util/templates"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/internal/replayrun"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

const replayExample = `  # Record, then replay as human lines
  kubectl informer watch deploy -n demo --record demo.ndjson
  kubectl informer replay demo.ndjson

  # The JSON contract again, for jq
  kubectl informer replay demo.ndjson -o json | jq -c '{type, delta, name, resourceVersion}'

  # Only the relists and the errors before them, with what changed in each update
  kubectl informer replay demo.ndjson --types Error,WatchClosed,Relist,Updated --diff

  # One object in one namespace, from 2 minutes after the start to a moment in time
  kubectl informer replay demo.ndjson web -n demo --since 2m --until 2026-11-21T05:40:00Z

  # One object's whole life as a table: every event, who made it, what it changed
  kubectl informer replay demo.ndjson --history demo/web

  # In real time, or ten times faster
  kubectl informer replay demo.ndjson --speed 1
  kubectl informer replay demo.ndjson --speed 10`

// ReplayOptions holds the flags and state of `kubectl informer replay`.
type ReplayOptions struct {
	configFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// Display holds the flags replay shares with watch: output, color, --types, --predicate...
	Display *DisplayFlags

	Names         []string
	AllNamespaces bool
	LabelSelector string
	Resource      string
	Since         string
	Until         string
	Speed         float64
	Strict        bool
	AuditLog      string
	Noise         *NoiseFlags
	OTLP          OTLPOptions
	History       string

	file      string
	namespace string        // "" : every namespace
	filter    replay.Filter // names, namespace, labels, resources, types, time; set by Validate
	redetect  bool          // --hot-loop-* given: detect hot loops again instead of showing the recorded ones
}

// NewReplayOptions returns options with their defaults.
func NewReplayOptions(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *ReplayOptions {
	display := NewDisplayFlags()
	display.usage = replayDisplayUsage
	return &ReplayOptions{configFlags: configFlags, IOStreams: streams, Display: display, Noise: NewNoiseFlags()}
}

// NewCmdReplay returns `kubectl informer replay`.
func NewCmdReplay(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewReplayOptions(configFlags, streams)
	cmd := &cobra.Command{
		Use:   "replay FILE [NAME]",
		Short: "Print a recording made with watch --record, through the same printers and filters",
		Long: templates.LongDesc(`Print a recording made with 'kubectl informer watch --record FILE' (or saved
'-o json' output) as the watch would have printed it: human lines, -o json and the other
formats, filtered by name, namespace, label, resource, type and time, as fast as possible or
at the recorded pace (--speed). FILE '-' reads standard input. The cluster is not contacted.

A damaged line is reported on stderr with its line number, the rest is replayed, and the exit
code is 1 (--strict stops at the first). See docs/recording.md.`),
		Example: templates.Examples(replayExample),
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("you must specify a recording (e.g. 'kubectl informer replay demo.ndjson'); see 'kubectl informer replay -h' for help and examples")
			case len(args) > 2:
				return fmt.Errorf("too many arguments %q: replay takes FILE [NAME]", args)
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveDefault // file names
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: runE(o),
	}
	f := cmd.Flags()
	o.Display.AddFlags(cmd)
	f.StringArrayVar(&o.Names, "name", o.Names, "Only this object (also the NAME argument); a shell pattern such as 'web-*' matches several. Repeatable. Lines about no object (lists, watches, relists) are kept.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "Every namespace (the default; overrides -n).")
	f.StringVarP(&o.LabelSelector, "selector", "l", o.LabelSelector, "Only objects whose recorded labels match (e.g. -l app=web).")
	f.StringVar(&o.Resource, "resource", o.Resource, "Only these resources of a recording of several, comma-separated, named as for watch: plural (deployments), short name (deploy), singular, kind (Deployment), plural.group (deployments.apps). A name the recording has no resource for is an error.")
	f.StringVar(&o.Since, "since", o.Since, "Start at this moment: an RFC 3339 time, a clock time as human output shows it (15:04:05), or a duration after the recording's first event (2m).")
	f.StringVar(&o.Until, "until", o.Until, "Stop after this moment (inclusive), in the same forms as --since.")
	f.Float64Var(&o.Speed, "speed", o.Speed, "0: as fast as possible; 1: at the recorded pace (real time); 10: ten times faster.")
	f.StringVar(&o.History, "history", o.History, "Print one object's whole life, NAMESPACE/NAME (NAME for a cluster-scoped object), as a table: every event about it (adds, updates, deletes, reconciles, hot loops) with its resourceVersion, state, who made it and what it changed (--ignore-path fields left out). With --resource when several resources have the name.")
	f.BoolVar(&o.Strict, "strict", o.Strict, "Stop at the first damaged line instead of reporting it and going on.")
	f.StringVar(&o.AuditLog, "audit-log", o.AuditLog, "The API server's audit log (a file) of the recorded time: each object line says who made its write (user, service account, user agent, impersonation), as watch --audit-log does.")
	o.Noise.AddFlags(f)
	o.OTLP.AddFlags(f)
	return cmd
}

// Complete reads the arguments and the flags whose meaning depends on others.
func (o *ReplayOptions) Complete(cmd *cobra.Command, args []string) error {
	o.file = args[0]
	if len(args) == 2 {
		o.Names = append(o.Names, args[1])
	}
	// Unlike watch, replay shows every namespace unless -n is given: the recording decided.
	if cmd != nil && cmd.Flags().Changed("namespace") && !o.AllNamespaces && o.configFlags != nil && o.configFlags.Namespace != nil {
		o.namespace = *o.configFlags.Namespace
	}
	if o.History != "" {
		ns, name, found := strings.Cut(o.History, "/")
		if !found {
			ns, name = "", ns
		}
		o.namespace = ns
		o.Names = append(o.Names, name)
	}
	if cmd != nil && (cmd.Flags().Changed("hot-loop-updates") || cmd.Flags().Changed("hot-loop-window")) {
		o.redetect = true
	}
	return nil
}

// Validate checks the flags before the recording is opened, and makes the filter.
func (o *ReplayOptions) Validate() error {
	if strings.TrimSpace(o.file) == "" {
		return errors.New("you must specify a recording")
	}
	if err := o.Display.Validate(); err != nil {
		return err
	}
	if o.History != "" {
		ns, name, _ := strings.Cut(o.History, "/")
		if strings.Contains(o.History, "/") && (ns == "" || name == "" || strings.Contains(name, "/")) {
			return fmt.Errorf("--history takes NAMESPACE/NAME, or NAME for a cluster-scoped object; got %q", o.History)
		}
		if strings.ContainsAny(o.History, "*?[") {
			return fmt.Errorf("--history takes one object, not a pattern; got %q", o.History)
		}
		if f := o.Display.OutputFormat(); f != printer.OutputHuman && f != printer.OutputWide {
			return fmt.Errorf("--history prints a table: it takes no -o but wide (got -o %s)", o.Display.Output)
		}
	}
	if o.Speed < 0 || math.IsNaN(o.Speed) || math.IsInf(o.Speed, 0) {
		return fmt.Errorf("--speed must be 0 (as fast as possible) or a factor > 0 (1: real time), got %v", o.Speed)
	}
	for _, n := range o.Names {
		if _, err := path.Match(n, ""); err != nil || n == "" {
			return fmt.Errorf("invalid name pattern %q", n)
		}
	}
	f := replay.Filter{Types: o.Display.types, Namespace: o.namespace, Names: o.Names,
		ObjectTypes: []watch.Type{watch.HotLoop, watch.HotLoopEnded}}
	if o.Resource != "" {
		for _, part := range strings.Split(o.Resource, ",") {
			switch {
			case strings.TrimSpace(part) == "":
				return fmt.Errorf("--resource %q has an empty resource type", o.Resource)
			case strings.Contains(part, "/"):
				return fmt.Errorf("--resource takes resource types, not objects (%q): give the object's name as the NAME argument or with --name", part)
			}
		}
		f.Resources = replay.NewResourceFilter(o.Resource)
	}
	var err error
	if f.Selector, err = labels.Parse(o.LabelSelector); err != nil {
		return fmt.Errorf("invalid label selector %q: %w", o.LabelSelector, err)
	}
	if f.Since, err = replay.ParseBound("--since", o.Since); err != nil {
		return err
	}
	if f.Until, err = replay.ParseBound("--until", o.Until); err != nil {
		return err
	}
	o.filter = f
	if err := o.OTLP.Validate(); err != nil {
		return err
	}
	return o.Noise.Validate()
}

// Run replays the recording (internal/replayrun).
func (o *ReplayOptions) Run(ctx context.Context) error {
	return replayrun.Run(ctx, o.config())
}

// config is the replay's typed configuration.
func (o *ReplayOptions) config() replayrun.Config {
	d := o.Display
	popts := d.ToOptions(o.Out, o.ErrOut)
	popts.QueueColumn = popts.ShowReconciles
	popts.ShowAPIStats = d.NamesType(watch.ApiStats)
	popts.FlushEach = o.Speed > 0 || o.file == "-"
	return replayrun.Config{File: o.file, In: o.In, Out: o.Out, ErrOut: o.ErrOut, Version: Version,
		Filter: o.filter, Printer: popts, ShowSecrets: d.ShowSecrets, NoSummary: d.NoSummary, NoHeaders: d.NoHeaders,
		Changes: d.Diff != "", Redetect: o.redetect, HotLoopUpdates: d.HotLoopUpdates, HotLoopWindow: d.HotLoopWindow,
		Predicates: d.predicates, PredicateList: predicateList(d.predicates), Noise: o.Noise.filter, Fold: o.Noise.fold,
		Speed: o.Speed, Strict: o.Strict, History: o.History, OTLP: o.OTLP.Enabled, ErrorLine: ErrorLine, AuditLog: o.AuditLog}
}
