package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// DisplayFlags are the flags watch and replay share to say what is shown and how, in the manner
// of kubectl's PrintFlags: defaults in NewDisplayFlags, one registration (AddFlags), Validate
// (pure), and ToOptions to the printer's typed options.
type DisplayFlags struct {
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
	Types          []string
	Predicates     []string

	// usage is the command's own help of a flag, where it says more or other than watch's.
	usage map[string]string

	types      map[watch.Type]bool // --types, set by Validate; nil: every type
	predicates []watch.Predicate   // --predicate, set by Validate
}

// NewDisplayFlags returns the flags with their defaults and watch's help.
func NewDisplayFlags() *DisplayFlags {
	return &DisplayFlags{Color: "auto", Timestamps: "absolute", HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second}
}

// displayUsage is the help of each display flag (watch's).
var displayUsage = map[string]string{
	"output":           "Output format: empty for human lines, wide (plus labels, controller owner, generation/observedGeneration, the state's message and the kind's own columns: node, IP, images, a CRD's priority-1 printer columns), json (one JSON object per line, see docs/json.md), yaml (one document per event), jsonpath=TEMPLATE, go-template=TEMPLATE (applied to each event's JSON record; also jsonpath-file, jsonpath-as-json, go-template-file).",
	"color":            "Color human output: auto (a terminal, NO_COLOR unset), always or never.",
	"show-bookmarks":   "Show BOOKMARK events in human output (always present in -o json).",
	"show-secrets":     "Show Secret values instead of redacting them.",
	"show-reconciles":  "Show the simulated workqueue: Reconciled lines and the queue=N column (on whenever a worker flag is set; without it -o json has no Reconciled lines either).",
	"no-summary":       "Do not print the exit summary on stderr.",
	"diff":             "Show what each update changed: inline (changed fields with old → new; the default when --diff is given alone) or full (also a unified YAML diff).",
	"timestamps":       "Time column of human output: absolute (wall clock), relative (since the first event) or none.",
	"no-headers":       "Leave out the # header line of human output.",
	"hot-loop-updates": "Report a HotLoop when one object is updated more than this many times within --hot-loop-window, or by two managers taking turns; 0 turns hot-loop detection off.",
	"hot-loop-window":  "The window of --hot-loop-updates; a hot loop ends when a window passes without an update.",
	"types": "Only these line types, comma-separated, any case (e.g. Updated,Relist): " + typeNames() +
		". Naming Bookmark or Reconciled also shows them in human output, where Informer is the # header line. --record and the exit summary still get every line.",
	"predicate": predicateUsage + " The summary says how many reconciles they saved (a shadow queue is fed every event).",
}

// replayDisplayUsage is replay's help where it differs from watch's: replay reads a recording.
var replayDisplayUsage = map[string]string{
	"output":           "Output format, as for watch: empty for human lines, wide, json, yaml, jsonpath=TEMPLATE, go-template=TEMPLATE (and the -file forms).",
	"show-secrets":     "Show Secret values, if the recording has them (recorded with --show-secrets); by default they are redacted.",
	"show-reconciles":  "Show Reconciled lines in human output (always in -o json).",
	"no-summary":       "Do not print the summary on stderr.",
	"diff":             "Show what each update changed: inline (the default when --diff is given alone) or full (also a unified YAML diff).",
	"timestamps":       "Time column of human output: absolute (the recorded wall clock), relative (since the first event shown) or none.",
	"no-headers":       "Leave out the # header lines of human output.",
	"hot-loop-updates": "Detect hot loops again with this threshold (see watch) instead of showing the recorded HotLoop lines.",
	"hot-loop-window":  "Detect hot loops again with this window (see watch) instead of showing the recorded HotLoop lines.",
	"types": "Only these line types, comma-separated, any case (e.g. Updated,Relist): " + typeNames() +
		". Naming Bookmark or Reconciled also shows them in human output, where Informer is the # header line.",
	"predicate": predicateUsage + " Object lines a predicate drops are marked filtered; the summary says which recorded reconciles ran only for such events.",
}

func (d *DisplayFlags) help(name string) string {
	if u, ok := d.usage[name]; ok {
		return u
	}
	return displayUsage[name]
}

// AddFlags registers the flags, and the completion of their values, on cmd.
func (d *DisplayFlags) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&d.Output, "output", "o", d.Output, d.help("output"))
	f.StringVar(&d.Color, "color", d.Color, d.help("color"))
	f.BoolVar(&d.ShowBookmarks, "show-bookmarks", d.ShowBookmarks, d.help("show-bookmarks"))
	f.BoolVar(&d.ShowSecrets, "show-secrets", d.ShowSecrets, d.help("show-secrets"))
	f.BoolVar(&d.ShowReconciles, "show-reconciles", d.ShowReconciles, d.help("show-reconciles"))
	f.BoolVar(&d.NoSummary, "no-summary", d.NoSummary, d.help("no-summary"))
	f.StringVar(&d.Diff, "diff", d.Diff, d.help("diff"))
	f.Lookup("diff").NoOptDefVal = "inline"
	f.StringVar(&d.Timestamps, "timestamps", d.Timestamps, d.help("timestamps"))
	f.BoolVar(&d.NoHeaders, "no-headers", d.NoHeaders, d.help("no-headers"))
	f.IntVar(&d.HotLoopUpdates, "hot-loop-updates", d.HotLoopUpdates, d.help("hot-loop-updates"))
	f.DurationVar(&d.HotLoopWindow, "hot-loop-window", d.HotLoopWindow, d.help("hot-loop-window"))
	f.StringSliceVar(&d.Types, "types", d.Types, d.help("types"))
	f.StringArrayVar(&d.Predicates, "predicate", d.Predicates, d.help("predicate"))

	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	outputs := []string{"json", "yaml", "wide"}
	for _, f := range printer.AllowedOutputs() {
		if !slices.Contains(outputs, f) {
			outputs = append(outputs, f+"=")
		}
	}
	var types []string
	for _, t := range printer.KnownTypes {
		types = append(types, string(t))
	}
	for name, fn := range map[string]cobra.CompletionFunc{
		"output":     fixed(outputs...),
		"color":      fixed("auto", "always", "never"),
		"diff":       fixed("inline", "full"),
		"timestamps": fixed("absolute", "relative", "none"),
		"types":      fixed(types...),
	} {
		if err := cmd.RegisterFlagCompletionFunc(name, fn); err != nil {
			panic(fmt.Sprintf("completion for --%s: %v", name, err))
		}
	}
}

// Validate checks the flags and parses --types and --predicate.
func (d *DisplayFlags) Validate() error {
	if err := printer.OutputFormat(d.Output).Validate(); err != nil {
		return err
	}
	switch d.Color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("--color must be one of auto, always, never; got %q", d.Color)
	}
	switch d.Diff {
	case "", "inline", "full":
	default:
		return fmt.Errorf("--diff must be inline or full, got %q", d.Diff)
	}
	switch d.Timestamps {
	case "", "absolute", "relative", "none":
	default:
		return fmt.Errorf("--timestamps must be one of absolute, relative, none; got %q", d.Timestamps)
	}
	if d.HotLoopUpdates < 0 {
		return fmt.Errorf("--hot-loop-updates must be >= 0, got %d", d.HotLoopUpdates)
	}
	if d.HotLoopWindow <= 0 {
		return fmt.Errorf("--hot-loop-window must be > 0, got %s", d.HotLoopWindow)
	}
	types, err := parseTypes(d.Types)
	if err != nil {
		return err
	}
	preds, err := watch.ParsePredicates(d.Predicates)
	if err != nil {
		return err
	}
	d.types, d.predicates = types, preds
	return nil
}

// OutputFormat is -o, typed.
func (d *DisplayFlags) OutputFormat() printer.OutputFormat { return printer.OutputFormat(d.Output) }

// NamesType reports whether --types names t.
func (d *DisplayFlags) NamesType(t watch.Type) bool { return d.types[t] }

// ToOptions turns the flags into the printer's options for out (color: whether out takes it);
// the command adds what is its own (the queue column, the ApiStats lines, flushing).
func (d *DisplayFlags) ToOptions(out, errOut io.Writer) printer.Options {
	return printer.Options{
		Output:         d.OutputFormat(),
		Color:          wantColor(d.Color, out),
		ShowBookmarks:  d.ShowBookmarks || d.types[watch.Bookmark],
		ShowSecrets:    d.ShowSecrets,
		ShowReconciles: d.ShowReconciles || d.types[watch.Reconciled],
		Diff:           d.Diff,
		Timestamps:     d.Timestamps,
		NoHeaders:      d.NoHeaders,
		ErrOut:         errOut,
	}
}

// wantColor turns --color into a decision: always, never, or auto (a terminal, NO_COLOR unset).
func wantColor(color string, out io.Writer) bool {
	switch color {
	case "always":
		return true
	case "auto":
		return printers.AllowsColorOutput(out)
	}
	return false
}

// parseTypes turns --types into the set of line types to show; nil (every type) when empty.
func parseTypes(types []string) (map[watch.Type]bool, error) {
	if len(types) == 0 {
		return nil, nil
	}
	set := map[watch.Type]bool{}
	for _, t := range types {
		t = strings.TrimSpace(t)
		i := slices.IndexFunc(printer.KnownTypes, func(k watch.Type) bool { return strings.EqualFold(string(k), t) })
		if i < 0 {
			return nil, fmt.Errorf("unknown type %q in --types; known types: %s", t, typeNames())
		}
		set[printer.KnownTypes[i]] = true
	}
	return set, nil
}

func typeNames() string {
	var names []string
	for _, t := range printer.KnownTypes {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}
