package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/kubectl/pkg/util/templates"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/internal/readonly"
	"github.com/kubectl-informer/kubectl-informer/internal/watchrun"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

const watchExample = `  # Watch deployments in the current namespace
  kubectl informer watch deployments

  # Everything the informer receives, as NDJSON for jq
  kubectl informer watch deploy -n demo -o json | jq -c '{type, delta, name, resourceVersion}'

  # Config maps and secrets in all namespaces, with a 30s resync
  kubectl informer watch cm,secrets -A --resync 30s

  # One object, by name
  kubectl informer watch deployment/web -n demo

  # Only relists, errors and deletes
  kubectl informer watch cm -A --types Relist,Error,Deleted

  # A Deployment, the ReplicaSets and pods it owns, and the Events its controllers write
  kubectl informer watch deploy web -n demo --owned --events`

// WatchOptions holds the flags and resolved state of `kubectl informer watch`.
type WatchOptions struct {
	configFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	Timeout       time.Duration
	Resync        time.Duration

	// Display holds the flags watch shares with replay: output, color, --types, --predicate...
	Display *DisplayFlags

	Workers       int
	ReconcileTime time.Duration
	FailRate      float64
	RateLimiter   string

	Record       string
	SyncTimeout  time.Duration
	OutputBuffer int
	MetadataOnly bool
	DropManaged  bool
	CPUProfile   string
	MemProfile   string

	Metrics MetricsOptions
	Logs    ControllerLogsOptions
	Audit   AuditOptions
	Noise   *NoiseFlags
	API     APIOptions
	OTLP    OTLPOptions

	Order       string
	OrderWindow time.Duration

	Owned          bool
	OwnedResources []string
	Events         bool

	resourceArg string
	name        string
	namespace   string
	// onSynced is called once the watched resources' initial lists are in (reenact starts
	// writing then).
	onSynced func()
}

// NewWatchOptions returns options with their defaults.
func NewWatchOptions(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *WatchOptions {
	return &WatchOptions{configFlags: configFlags, IOStreams: streams, Display: NewDisplayFlags(), Workers: 1, RateLimiter: "default", Metrics: NewMetricsOptions(), Noise: NewNoiseFlags(), SyncTimeout: 60 * time.Second, OutputBuffer: outboxSize}
}

// NewCmdWatch returns `kubectl informer watch`.
func NewCmdWatch(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewWatchOptions(configFlags, streams)
	cmd := &cobra.Command{
		Use:     "watch RESOURCE[,RESOURCE...] [NAME] | RESOURCE/NAME",
		Short:   "Stream what an informer receives for one or more resources",
		Example: templates.Examples(watchExample),
		// Resource names from the discovery cache, then object names.
		ValidArgsFunction: completeWatchArgs(configFlags),
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("you must specify the type of resource to watch (e.g. 'kubectl informer watch deployments'); see 'kubectl informer watch -h' for help and examples")
			case len(args) > 2:
				return fmt.Errorf("too many arguments %q: watch takes RESOURCE[,RESOURCE...] [NAME] or RESOURCE/NAME", args)
			}
			return nil
		},
		RunE: runE(o),
	}
	f := cmd.Flags()
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "Watch across all namespaces. The --namespace flag is ignored.")
	f.StringVarP(&o.LabelSelector, "selector", "l", o.LabelSelector, "Label selector to filter on (e.g. -l key1=value1,key2=value2); the informer's list and watch use it.")
	f.StringVar(&o.FieldSelector, "field-selector", o.FieldSelector, "Field selector to filter on (e.g. --field-selector metadata.name=web).")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "Stop after this long (e.g. 30s, 5m); 0 runs until interrupted.")
	f.DurationVar(&o.Resync, "resync", o.Resync, "Resync period of the informer (0, the default, as most controllers run: no periodic resync).")
	f.IntVar(&o.Workers, "workers", o.Workers, "Simulated workers draining the workqueue behind the informer.")
	f.DurationVar(&o.ReconcileTime, "reconcile-time", o.ReconcileTime, "Simulated work per key (e.g. 200ms).")
	f.Float64Var(&o.FailRate, "fail-rate", o.FailRate, "Fraction (0..1) of reconciles that fail and are requeued rate-limited.")
	f.StringVar(&o.RateLimiter, "rate-limiter", o.RateLimiter, "Workqueue rate limiter: "+strings.Join(watch.RateLimiters, ", ")+" (client-go's constructors; default is DefaultTypedControllerRateLimiter).")
	f.BoolVar(&o.MetadataOnly, "metadata-only", o.MetadataOnly, "Watch through the metadata client (PartialObjectMetadata over protobuf): names, labels, owners, resourceVersions and managers only, at a fraction of the cost (no status: the only state a line shows is Terminating). For huge resources.")
	f.BoolVar(&o.DropManaged, "drop-managed-fields", o.DropManaged, "Drop metadata.managedFields before objects are cached (an informer transform): much less memory on big clusters, but no manager attribution and objects without managedFields.")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "Write a CPU profile of the run to this file (for make bench and bug reports).")
	f.StringVar(&o.MemProfile, "memprofile", "", "Write a heap profile to this file when the run ends, and to FILE.synced when the initial lists are in.")
	_ = f.MarkHidden("cpuprofile")
	_ = f.MarkHidden("memprofile")
	f.IntVar(&o.OutputBuffer, "output-buffer", o.OutputBuffer, "Events that may wait for a slow reader of stdout; beyond it human output drops or folds adds and updates (counted; never deletes or lifecycle lines) and machine-readable output makes the informers wait.")
	_ = f.MarkHidden("output-buffer")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "How long a streaming list may go without its initial-events-end bookmark before the plugin says so and falls back to LIST+WATCH (0: wait forever).")
	f.StringVar(&o.Record, "record", o.Record, "Also write the full stream (the -o json contract, objects included, secrets redacted unless --show-secrets) to this file, mode 0600, for kubectl informer replay (or report).")
	o.Metrics.AddFlags(f)
	o.Logs.AddFlags(f)
	o.Audit.AddFlags(f)
	o.Noise.AddFlags(f)
	o.API.AddFlags(f)
	o.OTLP.AddFlags(f)
	f.StringVar(&o.Order, "order", "rv", "Order of the lines of several resources: rv (hold each line up to --order-window and put live watch events in the server's resourceVersion order) or arrival (as each informer delivers them).")
	f.DurationVar(&o.OrderWindow, "order-window", 100*time.Millisecond, "How long --order rv holds a line to find earlier events of other resources.")
	f.BoolVar(&o.Owned, "owned", o.Owned, "Also watch what the watched objects own, recursively by ownerReferences (Deployment → ReplicaSets → Pods, StatefulSet and DaemonSet → Pods and ControllerRevisions, CronJob → Jobs → Pods, Service → EndpointSlices, plus --owned-resources); each owned line carries its owner chain. Owned informers start as owners appear, in the same namespace scope (every namespace for what cluster-scoped roots own, unless -n is given), with the named owner's label selector when there is one. A cluster-scoped object is followed only below cluster-scoped owners, as the garbage collector takes ownerReferences.")
	f.StringSliceVar(&o.OwnedResources, "owned-resources", o.OwnedResources, "With --owned, more resources the watched objects may own (e.g. what a custom resource's operator creates: --owned-resources deployments,configmaps; cluster-scoped ones below cluster-scoped owners: --owned-resources claims,nodes).")
	f.BoolVar(&o.Events, "events", o.Events, "Merge the Events (events.k8s.io/v1) regarding the shown objects into the stream as KubeEvent lines: reason, note, Normal or Warning, the reporting controller.")
	o.Display.AddFlags(cmd)
	return cmd
}

// Complete parses the arguments and reads the namespace from the kubeconfig.
func (o *WatchOptions) Complete(cmd *cobra.Command, args []string) error {
	o.resourceArg = args[0]
	if len(args) == 2 {
		o.name = args[1]
	}
	if strings.Contains(o.resourceArg, "/") {
		if o.name != "" {
			return fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl informer watch resource/<resource_name>' instead of 'kubectl informer watch resource resource/<resource_name>')")
		}
		o.resourceArg, o.name, _ = strings.Cut(o.resourceArg, "/")
		if o.name == "" {
			return fmt.Errorf("arguments in resource/name form must have a single resource and name")
		}
	}
	if err := checkKubeconfig(o.configFlags); err != nil {
		return err
	}
	ns, _, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	if o.AllNamespaces {
		o.namespace = ""
	}
	// Simulating workers is asking to see them.
	for _, name := range []string{"workers", "reconcile-time", "fail-rate", "rate-limiter", "predicate"} {
		if cmd != nil && cmd.Flags().Changed(name) {
			o.Display.ShowReconciles = true
		}
	}
	return nil
}

// Validate checks the flags without talking to the server.
func (o *WatchOptions) Validate() error {
	if strings.TrimSpace(o.resourceArg) == "" {
		return errors.New("you must specify the type of resource to watch")
	}
	if o.Timeout < 0 {
		return fmt.Errorf("--timeout must be >= 0, got %s", o.Timeout)
	}
	if o.SyncTimeout < 0 {
		return fmt.Errorf("--sync-timeout must be >= 0, got %s", o.SyncTimeout)
	}
	if o.Resync < 0 {
		return fmt.Errorf("--resync must be >= 0, got %s", o.Resync)
	}
	if err := o.Display.Validate(); err != nil {
		return err
	}
	if o.Order != "" && o.Order != "rv" && o.Order != "arrival" {
		return fmt.Errorf(`--order must be "rv" or "arrival", got %q`, o.Order)
	}
	if len(o.OwnedResources) > 0 && !o.Owned {
		return errors.New("--owned-resources requires --owned")
	}
	if o.OrderWindow < 0 {
		return fmt.Errorf("--order-window must be >= 0, got %s", o.OrderWindow)
	}
	if o.Workers < 1 || o.Workers > MaxWorkers {
		return fmt.Errorf("--workers must be between 1 and %d, got %d", MaxWorkers, o.Workers)
	}
	if o.OutputBuffer < 1 || o.OutputBuffer > MaxOutputBuffer {
		return fmt.Errorf("--output-buffer must be between 1 and %d, got %d", MaxOutputBuffer, o.OutputBuffer)
	}
	if o.ReconcileTime < 0 {
		return fmt.Errorf("--reconcile-time must be >= 0, got %s", o.ReconcileTime)
	}
	if o.FailRate < 0 || o.FailRate > 1 || o.FailRate != o.FailRate {
		return fmt.Errorf("--fail-rate must be between 0 and 1, got %v", o.FailRate)
	}
	if !slices.Contains(watch.RateLimiters, o.RateLimiter) {
		return fmt.Errorf("--rate-limiter must be one of %s; got %q", strings.Join(watch.RateLimiters, ", "), o.RateLimiter)
	}
	if err := o.Metrics.Validate(); err != nil {
		return err
	}
	if err := o.Audit.Validate(); err != nil {
		return err
	}
	if err := o.Logs.Validate(); err != nil {
		return err
	}
	if err := o.Noise.Validate(); err != nil {
		return err
	}
	if err := o.API.Validate(); err != nil {
		return err
	}
	if err := o.OTLP.Validate(); err != nil {
		return err
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return fmt.Errorf("invalid label selector %q: %w", o.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
		return fmt.Errorf("invalid field selector %q: %w", o.FieldSelector, err)
	}
	return nil
}

// Bounds on flags that size memory: each simulated worker is a goroutine with its own state,
// each buffered event an object; past these a typo (--workers 100000000) would take the
// machine's memory before --timeout could end the run.
const (
	MaxWorkers      = 1000
	MaxOutputBuffer = 1_000_000
)

// fieldSelector adds the single-object name filter to the user's field selector.
func (o *WatchOptions) fieldSelector() string {
	if o.name == "" {
		return o.FieldSelector
	}
	byName := fields.OneTermEqualSelector("metadata.name", o.name).String()
	if o.FieldSelector == "" {
		return byName
	}
	return o.FieldSelector + "," + byName
}

// Run starts the profiles and runs the watch (internal/watchrun).
func (o *WatchOptions) Run(ctx context.Context) error {
	readonly.Permit(o.Metrics.permits()) // the only writes watch makes, when their flags ask
	stop, err := startProfiles(o.CPUProfile, o.MemProfile)
	if err != nil {
		return err
	}
	defer stop()
	return watchrun.Run(ctx, o.config())
}

// config is the watch's typed configuration: the flags, validated and parsed.
func (o *WatchOptions) config() watchrun.Config {
	d := o.Display
	popts := d.ToOptions(o.Out, o.ErrOut)
	// The ApiStats lines at exit: in human output with --api-stats only.
	popts.ShowAPIStats = o.API.Interval > 0 || d.NamesType(watch.ApiStats)
	popts.QueueColumn = d.ShowReconciles
	popts.OmitReconciles = !d.ShowReconciles && !d.NamesType(watch.Reconciled)
	popts.PluginVersion = Version
	return watchrun.Config{
		Flags: o.configFlags, In: o.In, Out: o.Out, ErrOut: o.ErrOut, Version: Version,
		Resources: o.resourceArg, Name: o.name, Namespace: o.namespace,
		LabelSelector: o.LabelSelector, FieldSelector: o.fieldSelector(),
		Timeout: o.Timeout, Resync: o.Resync, SyncTimeout: o.SyncTimeout,
		Queue:      watch.QueueConfig{Workers: o.Workers, ReconcileTime: o.ReconcileTime, FailRate: o.FailRate, RateLimiter: o.RateLimiter},
		Predicates: d.predicates, MetadataOnly: o.MetadataOnly, DropManaged: o.DropManaged,
		OutputBuffer: o.OutputBuffer, Record: o.Record, RecordedFlags: o.recordedFlags(), ShowSecrets: d.ShowSecrets,
		OrderWindow: o.orderWindow(), Owned: o.Owned, OwnedResources: o.OwnedResources, Events: o.Events,
		API: watchrun.API{Interval: o.API.Interval, QPS: o.API.QPS, Burst: o.API.Burst, ListMode: o.API.ListMode, ChunkSize: o.API.ChunkSize, Wire: o.API.Wire},
		Display: watchrun.Display{Printer: popts, Types: d.types, HotLoopUpdates: d.HotLoopUpdates, HotLoopWindow: d.HotLoopWindow,
			Changes: d.Diff != "", NoSummary: d.NoSummary, PredicateList: predicateList(d.predicates)},
		Filter: o.Noise.filter, Fold: o.Noise.fold,
		Metrics: o.Metrics.config(), Logs: o.Logs.config(),
		Audit: o.Audit.sources(),
		OTLP:  o.OTLP.Enabled, OnSynced: o.synced,
		ConnectError: func(err error) error { return kubeconfigHint(err, o.configFlags) },
	}
}

// synced writes --memprofile's FILE.synced and calls onSynced once the initial lists are in;
// it does nothing without either.
func (o *WatchOptions) synced() {
	if o.MemProfile != "" {
		writeHeapProfile(o.MemProfile + ".synced")
	}
	if o.onSynced != nil {
		o.onSynced()
	}
}

// orderWindow is how long lines are held to be put in resourceVersion order: only with
// several resources (one stream is in order already) and --order rv.
func (o *WatchOptions) orderWindow() time.Duration {
	if o.Order == "arrival" || (!strings.Contains(o.resourceArg, ",") && !o.Owned && !o.Events) {
		return 0
	}
	return o.OrderWindow
}

// recordedFlags are the options that shaped the stream, for a recording's header, by their flag
// names (resources and name are the arguments). Credentials and connection flags are left out on
// purpose.
func (o *WatchOptions) recordedFlags() map[string]string {
	return map[string]string{
		"resources":            o.resourceArg,
		"name":                 o.name,
		"namespace":            o.namespace,
		"selector":             o.LabelSelector,
		"field-selector":       o.fieldSelector(),
		"resync":               o.Resync.String(),
		"workers":              fmt.Sprint(o.Workers),
		"reconcile-time":       o.ReconcileTime.String(),
		"fail-rate":            fmt.Sprint(o.FailRate),
		"rate-limiter":         o.RateLimiter,
		"predicate":            predicateList(o.Display.predicates),
		"show-secrets":         fmt.Sprint(o.Display.ShowSecrets),
		"timeout":              o.Timeout.String(),
		"sync-timeout":         o.SyncTimeout.String(),
		"hot-loop-updates":     fmt.Sprint(o.Display.HotLoopUpdates),
		"hot-loop-window":      o.Display.HotLoopWindow.String(),
		"order":                o.Order,
		"order-window":         o.orderWindow().String(),
		"metadata-only":        fmt.Sprint(o.MetadataOnly),
		"drop-managed-fields":  fmt.Sprint(o.DropManaged),
		"metrics-url":          fmt.Sprintf("%d given", len(o.Metrics.URLs)),
		"owned":                fmt.Sprint(o.Owned),
		"owned-resources":      strings.Join(o.OwnedResources, ","),
		"events":               fmt.Sprint(o.Events),
		"ignore-path":          strings.Join(o.Noise.IgnorePaths, " "),
		"only-path":            strings.Join(o.Noise.OnlyPaths, " "),
		"list-mode":            o.API.ListMode,
		"chunk-size":           fmt.Sprint(o.API.ChunkSize),
		"wire":                 o.API.Wire,
		"qps":                  fmt.Sprint(o.API.QPS),
		"burst":                fmt.Sprint(o.API.Burst),
		"api-stats":            o.API.Interval.String(),
		"controller-logs":      strings.Join(o.Logs.Files, " "),
		"controller-logs-from": strings.Join(o.Logs.From, " "),
		"audit-log":            o.Audit.File,
		"audit-webhook-listen": o.Audit.WebhookListen,
		"controller-log-keys":  o.Logs.Keys,
	}
}

// outboxSize bounds the events waiting for stdout.
const outboxSize = 10000

// predicateUsage is the help of --predicate, shared by watch and replay.
var predicateUsage = "Drop events before the simulated workqueue as a controller-runtime predicate would: " + strings.Join(watch.Predicates, ", ") +
	" (an update passes when that field changed; creates and deletes always pass). Repeat it for predicates that must all pass; join names with | for any of them (predicate.Or)."

// predicateList is --predicate as the summary and a recording's header say it.
func predicateList(ps []watch.Predicate) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}
