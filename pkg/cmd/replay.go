package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/analysis"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
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

	Output         string
	Color          string
	ShowBookmarks  bool
	ShowSecrets    bool
	ShowReconciles bool
	NoSummary      bool
	Diff           string
	Timestamps     string
	NoHeaders      bool
	HotLoopUpdates int
	HotLoopWindow  time.Duration

	Names         []string
	AllNamespaces bool
	LabelSelector string
	Resource      string
	Types         []string
	Since         string
	Until         string
	Speed         float64
	Strict        bool
	Predicates    []string
	Noise         *NoiseFlags
	History       string

	file       string
	namespace  string // "" : every namespace
	types      map[watch.Type]bool
	predicates []watch.Predicate
	resources  *resourceFilter // nil: every resource
	selector   labels.Selector
	since      timeBound
	until      timeBound
	redetect   bool // --hot-loop-* given: detect hot loops again instead of showing the recorded ones
	useColor   bool
}

// NewReplayOptions returns options with their defaults.
func NewReplayOptions(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *ReplayOptions {
	return &ReplayOptions{configFlags: configFlags, IOStreams: streams, Color: "auto", Timestamps: "absolute",
		HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second, Noise: NewNoiseFlags()}
}

// NewCmdReplay returns `kubectl informer replay`.
func NewCmdReplay(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewReplayOptions(configFlags, streams)
	cmd := &cobra.Command{
		Use:   "replay FILE [NAME]",
		Short: "Print a recording made with watch --record, through the same printers and filters",
		Long: `Print a recording made with 'kubectl informer watch --record FILE' (or saved
'-o json' output) as the watch would have printed it: human lines, -o json and the other
formats, filtered by name, namespace, label, resource, type and time, as fast as possible or
at the recorded pace (--speed). FILE '-' reads standard input. The cluster is not contacted.

A damaged line is reported on stderr with its line number, the rest is replayed, and the exit
code is 1 (--strict stops at the first). See docs/recording.md.`,
		Example: replayExample,
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format, as for watch: empty for human lines, wide, json, yaml, jsonpath=TEMPLATE, go-template=TEMPLATE (and the -file forms).")
	f.StringVar(&o.Color, "color", o.Color, "Color human output: auto (a terminal, NO_COLOR unset), always or never.")
	f.BoolVar(&o.ShowBookmarks, "show-bookmarks", o.ShowBookmarks, "Show BOOKMARK events in human output (always present in -o json).")
	f.BoolVar(&o.ShowSecrets, "show-secrets", o.ShowSecrets, "Show Secret values, if the recording has them (recorded with --show-secrets); by default they are redacted.")
	f.StringArrayVar(&o.Predicates, "predicate", o.Predicates, predicateUsage+" Object lines a predicate drops are marked filtered; the summary says which recorded reconciles ran only for such events.")
	f.BoolVar(&o.ShowReconciles, "show-reconciles", o.ShowReconciles, "Show Reconciled lines in human output (always in -o json).")
	f.BoolVar(&o.NoSummary, "no-summary", o.NoSummary, "Do not print the summary on stderr.")
	f.StringVar(&o.Diff, "diff", o.Diff, "Show what each update changed: inline (the default when --diff is given alone) or full (also a unified YAML diff).")
	f.Lookup("diff").NoOptDefVal = "inline"
	f.StringVar(&o.Timestamps, "timestamps", o.Timestamps, "Time column of human output: absolute (the recorded wall clock), relative (since the first event shown) or none.")
	f.BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "Leave out the # header lines of human output.")
	f.IntVar(&o.HotLoopUpdates, "hot-loop-updates", o.HotLoopUpdates, "Detect hot loops again with this threshold (see watch) instead of showing the recorded HotLoop lines.")
	f.DurationVar(&o.HotLoopWindow, "hot-loop-window", o.HotLoopWindow, "Detect hot loops again with this window (see watch) instead of showing the recorded HotLoop lines.")

	f.StringArrayVar(&o.Names, "name", o.Names, "Only this object (also the NAME argument); a shell pattern such as 'web-*' matches several. Repeatable. Lines about no object (lists, watches, relists) are kept.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "Every namespace (the default; overrides -n).")
	f.StringVarP(&o.LabelSelector, "selector", "l", o.LabelSelector, "Only objects whose recorded labels match (e.g. -l app=web).")
	f.StringVar(&o.Resource, "resource", o.Resource, "Only these resources of a recording of several, comma-separated, named as for watch: plural (deployments), short name (deploy), singular, kind (Deployment), plural.group (deployments.apps). A name the recording has no resource for is an error.")
	f.StringVar(&o.Since, "since", o.Since, "Start at this moment: an RFC 3339 time, a clock time as human output shows it (15:04:05), or a duration after the recording's first event (2m).")
	f.StringVar(&o.Until, "until", o.Until, "Stop after this moment (inclusive), in the same forms as --since.")
	f.Float64Var(&o.Speed, "speed", o.Speed, "0: as fast as possible; 1: at the recorded pace (real time); 10: ten times faster.")
	f.StringVar(&o.History, "history", o.History, "Print one object's whole life, NAMESPACE/NAME (NAME for a cluster-scoped object), as a table: every event about it (adds, updates, deletes, reconciles, hot loops) with its resourceVersion, state, who made it and what it changed (--ignore-path fields left out). With --resource when several resources have the name.")
	f.BoolVar(&o.Strict, "strict", o.Strict, "Stop at the first damaged line instead of reporting it and going on.")
	o.Noise.AddFlags(f)
	addTypesFlag(cmd, &o.Types, "")
	registerWatchFlagCompletions(cmd)
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
	o.useColor = wantColor(o.Color, o.Out)
	return nil
}

// Validate checks the flags before the recording is opened.
func (o *ReplayOptions) Validate() error {
	if strings.TrimSpace(o.file) == "" {
		return errors.New("you must specify a recording")
	}
	if err := validateDisplay(o.Output, o.Color, o.Diff, o.Timestamps, o.HotLoopUpdates, o.HotLoopWindow); err != nil {
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
		if o.Output != "" {
			return fmt.Errorf("--history prints a table: it takes no -o (got -o %s)", o.Output)
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
	if o.Resource != "" {
		for _, part := range strings.Split(o.Resource, ",") {
			switch {
			case strings.TrimSpace(part) == "":
				return fmt.Errorf("--resource %q has an empty resource type", o.Resource)
			case strings.Contains(part, "/"):
				return fmt.Errorf("--resource takes resource types, not objects (%q): give the object's name as the NAME argument or with --name", part)
			}
		}
		o.resources = newResourceFilter(o.Resource)
	}
	sel, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return fmt.Errorf("invalid label selector %q: %w", o.LabelSelector, err)
	}
	o.selector = sel
	if o.types, err = parseTypes(o.Types); err != nil {
		return err
	}
	if o.since, err = parseBound("--since", o.Since); err != nil {
		return err
	}
	if o.until, err = parseBound("--until", o.Until); err != nil {
		return err
	}
	if o.predicates, err = watch.ParsePredicates(o.Predicates); err != nil {
		return err
	}
	return o.Noise.Validate()
}

// timeBound is a --since or --until: an absolute time, a clock time, or an offset from the
// recording's first event. resolve fixes it once that event is known.
type timeBound struct {
	set    bool
	at     time.Time     // absolute, or resolved
	offset time.Duration // after the first event
	clock  *time.Time    // a time of day, local time
	rel    bool
}

var clockLayouts = []string{"15:04:05", "15:04:05.000", "15:04:05.000000", "15:04:05.000000000", "15:04"}

func parseBound(flag, s string) (timeBound, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return timeBound{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return timeBound{set: true, at: t}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return timeBound{}, fmt.Errorf("%s must be a time or a duration >= 0 after the recording's first event, got %s", flag, s)
		}
		return timeBound{set: true, offset: d, rel: true}, nil
	}
	for _, layout := range clockLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return timeBound{set: true, clock: &t}, nil
		}
	}
	return timeBound{}, fmt.Errorf("%s %q is neither an RFC 3339 time (2026-11-21T05:30:00Z), a clock time (05:30:00) nor a duration (2m)", flag, s)
}

// resolve fixes a relative or clock bound against the recording's first event: a clock time
// is on that event's day (local time), or the next day if earlier than the event.
func (b *timeBound) resolve(first time.Time) {
	switch {
	case b.rel:
		b.at, b.rel = first.Add(b.offset), false
	case b.clock != nil:
		f := first.Local()
		c := *b.clock
		at := time.Date(f.Year(), f.Month(), f.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), time.Local)
		if at.Before(f.Truncate(time.Second)) {
			at = at.AddDate(0, 0, 1)
		}
		b.at, b.clock = at, nil
	}
}

// replayState is one replay's moving parts.
type replayState struct {
	o        *ReplayOptions
	ctx      context.Context
	p        *printer.Printer
	pOpts    printer.Options // PluginVersion and ShowSecrets set by setPrinter
	redacted bool            // the recording's Secret values were redacted when recorded
	step     *analysis.Step  // changes, attribution, noise marks and, with --hot-loop-*, hot loops
	analyzed []watch.Event   // what the step handed on for the current line
	summary  *analysis.Summary
	preds    *predicateCheck              // --predicate
	stage    *noiseStage                  // human output: noise hidden, hot objects folded
	history  *printer.History             // --history: one object's rows, printed at the end
	labels   map[string]map[string]string // resource + key -> the last object's labels
	uidLabel map[string]map[string]string // uid -> the last object's labels (for the Events about it)

	first, last time.Time // the recording's first and last event times
	paceWall    time.Time // --speed: when the first shown event was printed
	paceRec     time.Time // and its recorded time
	shown       int

	warned       map[string]bool
	damaged      []int
	writeErr     error
	interrupted  bool
	secretWarned bool
}

// Run replays the recording.
func (o *ReplayOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in := o.In
	name := "standard input"
	if o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, o.file
	}
	rd, err := replay.NewReader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	summary := analysis.NewSummary()
	summary.FromRecording = true
	s := &replayState{o: o, ctx: ctx, summary: summary, labels: map[string]map[string]string{}, uidLabel: map[string]map[string]string{}, warned: map[string]bool{}}
	if len(o.predicates) > 0 {
		s.preds = newPredicateCheck(o.predicates)
	}
	human := o.Output == "" || o.Output == "wide"
	s.summary.HidesNoise = human
	s.stage = newNoiseStage(o.Noise, human)
	cfg := analysis.Config{Filter: o.Noise.filter, Changes: o.Diff != "" || o.History != "" || s.stage.folds()}
	if o.redetect {
		// Detecting again replaces the recorded HotLoop lines.
		cfg.HotLoopUpdates, cfg.HotLoopWindow, cfg.Redetect = o.HotLoopUpdates, o.HotLoopWindow, true
	}
	s.step = analysis.New(cfg)
	if o.History != "" {
		s.history = printer.NewHistory(printer.Options{Timestamps: o.Timestamps, ShowSecrets: o.ShowSecrets})
	}
	s.pOpts = printer.Options{
		Output: o.Output, Color: o.useColor,
		ShowBookmarks:  o.ShowBookmarks || o.types[watch.Bookmark],
		ShowReconciles: o.ShowReconciles || o.types[watch.Reconciled],
		QueueColumn:    o.ShowReconciles || o.types[watch.Reconciled],
		ShowAPIStats:   o.types[watch.ApiStats],
		ShowSecrets:    o.ShowSecrets,
		FlushEach:      o.Speed > 0 || o.file == "-",
		Diff:           o.Diff, Timestamps: o.Timestamps, NoHeaders: o.NoHeaders, ErrOut: o.ErrOut,
	}
	lines := 0
	var fatal error
	for fatal == nil && s.writeErr == nil && !s.interrupted {
		if ctx.Err() != nil {
			s.interrupted = true
			break
		}
		line, err := rd.Next()
		var lerr *replay.LineError
		var unknown *recording.UnknownTypeError
		switch {
		case errors.Is(err, io.EOF):
			fatal = io.EOF
			continue
		case errors.As(err, &lerr) && errors.As(err, &unknown):
			if !s.warned[unknown.Type] {
				s.warned[unknown.Type] = true
				s.warn("line %d: unknown line type %q (written by a newer kubectl informer?); lines of this type are skipped", lerr.Line, unknown.Type)
			}
			continue
		case errors.As(err, &lerr):
			if o.Strict {
				fatal = fmt.Errorf("%s: %w (--strict: stopped there)", name, lerr)
				continue
			}
			s.damaged = append(s.damaged, lerr.Line)
			fmt.Fprintln(o.ErrOut, ErrorLine(lerr))
			continue
		case err != nil:
			fatal = fmt.Errorf("%s: %w", name, err)
			continue
		}
		lines++
		if line.Header != nil {
			if fatal = s.learnResources(headerResources(line.Header), true); fatal != nil {
				continue
			}
			s.header(name, line.Header)
			continue
		}
		if rd.Headerless && lines == 1 {
			s.warn("%s has no recording header (plain -o json output?): replaying it as format version %d", name, recording.FormatVersion)
		}
		ev := line.Event
		if ev.Type == watch.Informer && ev.Info != nil {
			if fatal = s.learnResources(append(append([]discovery.Resource{}, ev.Info.Resources...), ev.Info.OwnedResources...), true); fatal != nil {
				continue
			}
		}
		if ev.Type == watch.Informer {
			s.redacted = line.SecretsRedacted
			s.setPrinter(line.PluginVersion)
		}
		if s.preds != nil {
			s.preds.observe(&ev)
		}
		s.seen(&ev)
		s.analyzed = s.step.Analyze(s.analyzed[:0], &ev)
		for i := range s.analyzed {
			s.handle(s.analyzed[i])
		}
	}
	s.show(s.stage.flush())
	if s.p != nil && s.writeErr == nil {
		s.writeErr = s.p.Flush()
	}
	if fatal != nil && !errors.Is(fatal, io.EOF) {
		return fatal
	}
	if s.history != nil && s.writeErr == nil && !s.interrupted {
		if s.history.Len() == 0 {
			return fmt.Errorf("%s has no events of %q", name, o.History)
		}
		s.writeErr = s.history.Write(o.Out)
	}
	if lines == 0 && len(s.damaged) == 0 && !s.interrupted {
		return fmt.Errorf("%s is empty: not a recording", name)
	}
	if o.resources != nil && !s.interrupted && s.writeErr == nil {
		if err := o.resources.check(); err != nil {
			return err
		}
	}
	if s.writeErr != nil {
		return nil // stdout went away (| head): stop quietly, as watch does
	}
	if !o.NoSummary {
		if s.preds != nil {
			s.summary.Predicates = s.preds.report()
		}
		s.writeSummary(name)
	}
	if n := len(s.damaged); n > 0 {
		return fmt.Errorf("%s: %d damaged %s not replayed (%s)", name, n, plural(n, "line", "lines"), lineList(s.damaged))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func lineList(nums []int) string {
	var parts []string
	for i, n := range nums {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(nums)-10))
			break
		}
		parts = append(parts, fmt.Sprint(n))
	}
	return "line " + strings.Join(parts, ", ")
}

func (s *replayState) warn(format string, args ...any) {
	fmt.Fprintln(s.o.ErrOut, "warning: "+printer.Escape(fmt.Sprintf(format, args...)))
}

// header takes in a recording header: the printer's plugin version and redaction, and, in
// human output, a comment line saying what is replayed.
func (s *replayState) header(name string, h *recording.Header) {
	s.redacted = h.SecretsRedacted
	s.setPrinter(h.PluginVersion)
	out := s.pOpts.Output
	if (out != "" && out != "wide") || s.o.NoHeaders {
		return
	}
	line := fmt.Sprintf("# replay of %s: recorded %s by kubectl informer %s against Kubernetes %s", name, h.Time, h.PluginVersion, h.ServerVersion)
	if s.p != nil {
		if s.writeErr = s.p.Flush(); s.writeErr != nil {
			return
		}
	}
	if s.o.useColor {
		line = "\x1b[2m" + printer.Escape(line) + "\x1b[0m"
	} else {
		line = printer.Escape(line)
	}
	if _, err := fmt.Fprintln(s.o.Out, line); err != nil {
		s.writeErr = err
	}
}

// setPrinter (re)makes the printer when the recording's plugin version or redaction changes
// (a recording of several runs): the Informer line carries both.
func (s *replayState) setPrinter(pluginVersion string) {
	opts := s.pOpts
	opts.PluginVersion = pluginVersion
	// Values redacted at recording time cannot be shown; ones recorded with --show-secrets are
	// redacted now unless --show-secrets.
	opts.ShowSecrets = s.o.ShowSecrets && !s.redacted
	if s.o.ShowSecrets && s.redacted && !s.secretWarned {
		s.secretWarned = true
		s.warn("the recording's Secret values were redacted when it was made (record with --show-secrets to keep them)")
	}
	if s.p != nil && opts.PluginVersion == s.pOpts.PluginVersion && opts.ShowSecrets == s.pOpts.ShowSecrets {
		return
	}
	if s.p != nil {
		if s.writeErr = s.p.Flush(); s.writeErr != nil {
			return
		}
	}
	s.pOpts = opts
	s.p = printer.New(s.o.Out, opts)
}

// seen notes a recorded line, shown or not: the recording's span and the objects' labels.
func (s *replayState) seen(ev *watch.Event) {
	if s.first.IsZero() {
		s.first = ev.Time
		s.o.since.resolve(ev.Time)
		s.o.until.resolve(ev.Time)
	}
	if ev.Time.After(s.last) {
		s.last = ev.Time
	}
	if ev.Type.IsObject() && ev.Object != nil {
		s.labels[ev.Resource.String()+" "+keyOf(ev.Namespace, ev.Name)] = ev.Object.GetLabels()
		s.uidLabel[string(ev.Object.GetUID())] = ev.Object.GetLabels()
	}
}

// handle filters, paces and prints one analyzed event.
func (s *replayState) handle(ev watch.Event) {
	if s.writeErr != nil || s.interrupted {
		return
	}
	if !s.keep(&ev) {
		return
	}
	if s.history != nil {
		if _, _, ok := objectOf(&ev); ok && ev.Type != watch.KubeEvent {
			s.summary.Add(&ev)
			s.shown++
			s.history.Add(&ev)
		}
		return
	}
	if s.p == nil {
		s.setPrinter("")
	}
	if s.o.Speed > 0 && !s.pace(ev.Time) {
		s.interrupted = true
		return
	}
	s.summary.Add(&ev)
	s.shown++
	// Folded lines are due by the recording's clock, as the live run's were by its own.
	s.show(s.stage.due(ev.Time))
	s.show(s.stage.pass(&ev, s.shows))
}

// shows says whether the printer shows an event (the filters passed): Folded lines stand for
// updates.
func (s *replayState) shows(ev *watch.Event) bool {
	if ev.Type == watch.Folded {
		return s.o.types == nil || s.o.types[watch.Updated]
	}
	return true
}

// show prints what the noise stage passed.
func (s *replayState) show(evs []watch.Event) {
	for i := range evs {
		if s.writeErr != nil {
			return
		}
		if evs[i].Type == watch.Folded {
			s.summary.Add(&evs[i])
		}
		if s.p == nil {
			s.setPrinter("")
		}
		if err := s.p.PrintRecorded(&evs[i], s.redacted); err != nil {
			s.writeErr = err
		}
	}
}

func keyOf(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// keep applies the filters.
func (s *replayState) keep(ev *watch.Event) bool {
	o := s.o
	if o.types != nil && !o.types[ev.Type] {
		return false
	}
	if o.since.set && ev.Time.Before(o.since.at) {
		return false
	}
	if o.until.set && ev.Time.After(o.until.at) {
		return false
	}
	if o.resources != nil && ev.Resource.Resource != "" && !o.resources.matches(ev.Resource) {
		return false
	}
	ns, name, ok := objectOf(ev)
	if !ok {
		return true // lines about no object stay
	}
	if o.namespace != "" && ns != "" && ns != o.namespace {
		return false
	}
	if len(o.Names) > 0 && !slices.ContainsFunc(o.Names, func(p string) bool { m, _ := path.Match(p, name); return m }) {
		return false
	}
	if !o.selector.Empty() {
		l := s.labels[ev.Resource.String()+" "+keyOf(ns, name)]
		if ev.Type.IsObject() && ev.Object != nil {
			l = ev.Object.GetLabels()
		}
		if ev.Type == watch.KubeEvent && ev.Kube != nil {
			l = s.uidLabel[ev.Kube.Regarding.UID]
		}
		if !o.selector.Matches(labels.Set(l)) {
			return false
		}
	}
	return true
}

// learnResources hands a run's resource list (a header, an Informer line) to --resource.
func (s *replayState) learnResources(rs []discovery.Resource, complete bool) error {
	if s.o.resources == nil {
		return nil
	}
	return s.o.resources.learn(rs, complete)
}

func headerResources(h *recording.Header) []discovery.Resource {
	var out []discovery.Resource
	for _, r := range h.Resources {
		out = append(out, discovery.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced})
	}
	return out
}

// objectOf returns the object a line is about: object events, Reconciled keys, HotLoop and
// HotLoopEnded lines.
func objectOf(ev *watch.Event) (ns, name string, ok bool) {
	switch {
	case ev.Type.IsObject(), ev.Type == watch.HotLoop, ev.Type == watch.HotLoopEnded:
		return ev.Namespace, ev.Name, true
	case ev.Type == watch.KubeEvent && ev.Kube != nil: // about the object it regards
		return ev.Kube.Regarding.Namespace, ev.Kube.Regarding.Name, true
	case ev.Type == watch.Reconciled:
		if n, rest, found := strings.Cut(ev.Key, "/"); found {
			return n, rest, true
		}
		return "", ev.Key, true
	}
	return "", "", false
}

// pace sleeps until ev's recorded time, scaled by --speed, has come. It returns false when
// interrupted.
func (s *replayState) pace(at time.Time) bool {
	if s.paceWall.IsZero() {
		s.paceWall, s.paceRec = time.Now(), at
		return true
	}
	wait := time.Until(s.paceWall.Add(time.Duration(float64(at.Sub(s.paceRec)) / s.o.Speed)))
	if wait <= 0 {
		return true
	}
	if s.p != nil {
		if s.writeErr = s.p.Flush(); s.writeErr != nil {
			return false
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// writeSummary prints the exit summary of what was shown, headed by the recording's span
// rather than the replay's duration.
func (s *replayState) writeSummary(name string) {
	span := s.last.Sub(s.first).Round(time.Millisecond)
	title := fmt.Sprintf("summary of %s (%s recorded, %d %s replayed)", printer.Escape(name), span, s.shown, plural(s.shown, "event", "events"))
	_ = printer.WriteSummary(s.o.ErrOut, title, s.summary)
}
