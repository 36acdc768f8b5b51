// Package watchrun is the orchestrator of `kubectl informer watch` (and of reenact's watch):
// from a typed Config it resolves the resources and builds the clients (internal/clients),
// opens the recording, starts the scrapes, the controllers' logs, the audit log and the OTLP
// export, starts the informers, runs the pipeline's live loop, and ends with the summary.
// Everything a watch starts beside the pipeline, and every goroutine of it, starts here.
package watchrun

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Config is one watch, as the command's flags say it: validated, parsed and defaulted.
type Config struct {
	// Flags are the kubeconfig flags: the clients, -n as given, the context's cluster name.
	Flags *genericclioptions.ConfigFlags
	// In is read by --controller-logs -; Out gets the lines, ErrOut the diagnostics and the
	// summary.
	In          io.Reader
	Out, ErrOut io.Writer
	// Version is the plugin's, for the recording, the user agent and the spans.
	Version string

	// Resources is the RESOURCE[,RESOURCE...] argument, Name the object's name ("" for all),
	// Namespace the namespace watched ("" for all).
	Resources, Name, Namespace string
	// LabelSelector and FieldSelector are the informers' (the field selector with the name's).
	LabelSelector, FieldSelector string
	// Timeout ends the run (0: never); Resync and SyncTimeout are the informers'.
	Timeout, Resync, SyncTimeout time.Duration
	// Queue is the simulated workqueue; Predicates drop events before it.
	Queue      watch.QueueConfig
	Predicates []watch.Predicate
	// MetadataOnly watches through the metadata client; DropManaged drops managedFields.
	MetadataOnly, DropManaged bool
	// OutputBuffer bounds the lines waiting for stdout.
	OutputBuffer int
	// Record is --record's file ("" for none), its header's flags RecordedFlags; ShowSecrets
	// keeps Secret values in it.
	Record        string
	RecordedFlags map[string]string
	ShowSecrets   bool
	// OrderWindow is how long lines are held to be put in resourceVersion order (0: arrival).
	OrderWindow time.Duration
	// Owned follows what the watched objects own (and OwnedResources), Events their Events.
	Owned          bool
	OwnedResources []string
	Events         bool

	API     API
	Display Display
	// Filter and Fold are the noise flags (--ignore-path, --only-path, --fold; 0: off).
	Filter *noise.Filter
	Fold   time.Duration
	// Metrics are the scrapes, Logs the controllers' logs.
	Metrics Metrics
	Logs    Logs
	// Audit is the audit sources (--audit-log, --audit-webhook-listen).
	Audit audit.Sources
	// OTLP exports the lines as spans.
	OTLP bool

	// OnSynced is called once every watched resource has synced (nil: nothing).
	OnSynced func()
	// ConnectError says more of an error reaching the server (nil: the error as it is).
	ConnectError func(error) error
}

// API is the plugin's own API client and its accounting.
type API struct {
	// Interval of the ApiStats lines (--api-stats); 0: only at exit.
	Interval time.Duration
	// QPS and Burst of the client-side rate limiter (clients.Limits).
	QPS   float32
	Burst int
	// ListMode, ChunkSize and Wire are the informers' (watch.Config).
	ListMode  string
	ChunkSize int64
	Wire      string
}

// Display is what the output shows.
type Display struct {
	// Printer is the printer's options, complete (the queue column, ApiStats lines, version).
	Printer printer.Options
	// Types are the line types --types lets through (nil: every type).
	Types map[watch.Type]bool
	// HotLoopUpdates and HotLoopWindow detect hot loops; Changes computes each update's changes.
	HotLoopUpdates int
	HotLoopWindow  time.Duration
	Changes        bool
	// NoSummary leaves out the summary; PredicateList says --predicate in it.
	NoSummary     bool
	PredicateList string
}

// Run resolves the resources, starts the informers and the other sources and prints until ctx
// ends or the timeout: the data path, top to bottom.
func Run(ctx context.Context, c Config) error {
	o := &c
	// Before any request: a bad file or a port in use end the run with one line.
	auditCfg, err := o.Audit.Open(o.ErrOut)
	if err != nil {
		return err
	}
	t, err := o.resolveTargets(ctx)
	if err != nil {
		return o.connectError(err)
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	cfg, reorder, err := o.informerConfig(t)
	if err != nil {
		return err
	}
	feeds, err := o.Logs.feeds(t, o.Flags)
	if err != nil {
		return err
	}
	rec, err := o.openRecording(ctx, t)
	if err != nil {
		return err
	}
	if rec != nil {
		defer rec.Close()
	}
	// The scrapes end with the watch, also when it ends by itself (an error).
	scrapeCtx, stopScrapes := context.WithCancel(ctx)
	defer stopScrapes()
	scrapers, err := o.Metrics.start(scrapeCtx, t.restCfg, o.Flags, o.Namespace, "kubectl-informer/"+o.Version, func(w string) { fmt.Fprintln(o.ErrOut, w) })
	if err != nil {
		return err
	}
	exporter, err := o.startOTLP(ctx, t)
	if err != nil {
		return err
	}
	r := o.newWatchRun(ctx, cancel, rec, exporter, len(t.resources), o.Logs.reads(feeds))
	// A list's Added lines have their state read where the informer decodes their objects (as
	// an initial streaming list is received, or ahead of the lines), when nothing before the
	// printer needs the objects: not the recording, nor --owned and --events, which read every
	// line's object. Nor --otlp, which reads every object's uid and annotations.
	if rec == nil && t.owned == nil && t.eventsRes == nil && exporter == nil {
		cfg.Prepare = r.printer
	}
	events := make(chan watch.Event, 1024)
	done := make(chan error, 1)
	go func() { done <- watch.Run(ctx, cfg, events) }()

	// A line the audit log holds reaches the controllers' logs' join that much later.
	r.logs = o.Logs.start(scrapeCtx, t, feeds, o.Namespace, o.OrderWindow+o.Audit.Holds(), o.In, o.ErrOut)
	r.summary.LogsRead = r.logs != nil
	r.pipe.Run(pipeline.Live{
		Informers: events, Reorder: reorder, Lines: scrapers.events,
		Stats: t.stats, Accounted: t.accounted(), APIInterval: o.API.Interval,
		StdoutGone: r.stdoutGone.Load, Progress: r.progress,
		Joined: joined(audit.Start(scrapeCtx, auditCfg), r.logs),
	})
	r.summary.Ongoing = r.pipe.Step().Ongoing(time.Now())
	if cfg.PredicateStats != nil {
		r.summary.Predicates = &summary.PredicateReport{Predicates: o.Display.PredicateList, Unfiltered: cfg.PredicateStats.Unfiltered.Load()}
	}
	// The scrapes end with the watch, also when it ends by itself (an error).
	stopScrapes()
	scrapers.Wait()
	r.noteControllers(scrapers.Counted())
	return r.exit(done)
}

// noteControllers puts in the summary what each controller's metrics counted, and the
// reconciles its log showed that name no object (a singleton's), which no line shows.
func (r *watchRun) noteControllers(counted map[string]float64) {
	for controller, total := range counted {
		r.summary.SetCounted(controller, total)
	}
	noObject := map[string]int{}
	for _, st := range r.logs.Stats() {
		for controller, n := range st.NoObjectBy {
			noObject[controller] += n
		}
	}
	for controller, n := range noObject {
		r.summary.SetNoObject(controller, n)
	}
}

// connectError is err, an error reaching the server, as ConnectError says it.
func (o *Config) connectError(err error) error {
	if o.ConnectError == nil {
		return err
	}
	return o.ConnectError(err)
}

// startOTLP starts --otlp's exporter, with the cluster's identity on every span; nil without it.
func (o *Config) startOTLP(ctx context.Context, t *watchTargets) (*tracing.Exporter, error) {
	if !o.OTLP {
		return nil, nil
	}
	return tracing.Start(ctx, tracing.ClusterIdentity(ctx, t.restCfg, o.Flags), o.Version, o.ErrOut)
}
