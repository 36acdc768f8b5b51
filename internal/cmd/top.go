package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-informer/kubectl-informer/internal/clients"
	"github.com/kubectl-informer/kubectl-informer/internal/top"
	"github.com/kubectl-informer/kubectl-informer/internal/toptui"
	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var topExample = `
	# What is the whole cluster writing, and who? Every resource, all namespaces, live.
	kubectl informer top

	# A minute of it, then the final ranking with the command to drill into each object
	kubectl informer top --duration 1m

	# Only some resources, in one namespace, as NDJSON
	kubectl informer top deployments,replicasets,widgets -n shop -o json`

// TopOptions are the flags of `kubectl informer top`.
type TopOptions struct {
	configFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	resourceArg string // "" for every resource
	namespace   string // "" for all namespaces

	Window         time.Duration
	Interval       time.Duration
	Duration       time.Duration
	Limit          int
	Follow         int
	Output         string
	HotLoopUpdates int
	HotLoopWindow  time.Duration
	Rediscover     time.Duration
	API            APIOptions
	Audit          AuditOptions
	OTLP           OTLPOptions
}

// NewTopOptions holds the defaults.
func NewTopOptions(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *TopOptions {
	return &TopOptions{configFlags: configFlags, IOStreams: streams, Window: time.Minute, Interval: 2 * time.Second,
		Limit: 20, Follow: 3, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second, Rediscover: 30 * time.Second,
		API: APIOptions{QPS: 50, Burst: 100}}
}

// NewCmdTop returns `kubectl informer top`.
func NewCmdTop(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewTopOptions(configFlags, streams)
	cmd := &cobra.Command{
		Use:   "top [RESOURCE[,RESOURCE...]]",
		Short: "Rank what the whole cluster is writing, and who: objects, writers and resources by writes",
		Long: templates.LongDesc(`Follow every resource that can be listed and watched (or the ones given), in all
namespaces unless -n is given, through metadata-only informers, and rank over a sliding window
the objects by writes with their writers (field managers), the fields they write and the hot-loop
diagnosis with its fix; then the writers and the resources. Heartbeats (Lease renewals, node
status heartbeats) are counted apart. A resource you may not list is skipped and named.`),
		Example: templates.Examples(topExample),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("too many arguments %q: top takes [RESOURCE[,RESOURCE...]]", args)
			}
			return nil
		},
		RunE: runE(o),
	}
	f := cmd.Flags()
	f.DurationVar(&o.Window, "window", o.Window, "The sliding window the ranking counts writes over.")
	f.DurationVar(&o.Interval, "interval", o.Interval, "How often the ranking is redrawn (a table, or NDJSON lines, per interval).")
	f.DurationVar(&o.Duration, "duration", o.Duration, "Stop after this long and print the final ranking, with the command to drill into each object at the top; 0 runs until interrupted.")
	f.IntVar(&o.Limit, "limit", o.Limit, "Rows of each table (0: all).")
	f.IntVar(&o.Follow, "follow", o.Follow, "Follow the first N objects written with a full informer each (started as one enters them, stopped as it leaves), to show the values their newest update changed; 0 none.")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: empty for tables, or json (NDJSON: Top, TopWriter, TopResource and TopSkipped lines per interval).")
	f.IntVar(&o.HotLoopUpdates, "hot-loop-updates", o.HotLoopUpdates, "Diagnose a hot loop when one object is updated more than this many times within --hot-loop-window, or by two managers taking turns (as watch does).")
	f.DurationVar(&o.HotLoopWindow, "hot-loop-window", o.HotLoopWindow, "The window of --hot-loop-updates.")
	f.DurationVar(&o.Rediscover, "rediscover", o.Rediscover, "How often discovery is read again, so that resources created later (CRDs) are followed too; 0 never.")
	o.API.AddFlags(f)
	o.OTLP.AddFlags(f)
	o.Audit.addSourceFlags(f, "The API server's audit log (--audit-log-path: JSON lines of audit.k8s.io/v1 Events), followed as tail -F does: each ranking also says who hits the API server, reads included: requests/s by user and user agent, by verb and resource, 429s, and the costliest LISTs (no resourceVersion, cluster-wide, unpaginated). See docs/audit.md.")
	f.Lookup("qps").DefValue = "50"
	f.Lookup("burst").DefValue = "100"
	return cmd
}

// Complete reads the arguments and the namespace: all namespaces unless -n is given.
func (o *TopOptions) Complete(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.resourceArg = args[0]
	}
	if err := checkKubeconfig(o.configFlags); err != nil {
		return err
	}
	if cmd != nil && cmd.Flags().Changed("namespace") && o.configFlags.Namespace != nil {
		o.namespace = *o.configFlags.Namespace
	}
	return nil
}

// Validate checks the flags without talking to the server.
func (o *TopOptions) Validate() error {
	switch {
	case o.Window < time.Second:
		return fmt.Errorf("--window must be >= 1s, got %s", o.Window)
	case o.Interval <= 0:
		return fmt.Errorf("--interval must be > 0, got %s", o.Interval)
	case o.Duration < 0:
		return fmt.Errorf("--duration must be >= 0, got %s", o.Duration)
	case o.Limit < 0:
		return fmt.Errorf("--limit must be >= 0, got %d", o.Limit)
	case o.Follow < 0:
		return fmt.Errorf("--follow must be >= 0, got %d", o.Follow)
	case o.Output != "" && o.Output != "json":
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json", o.Output)
	case o.HotLoopUpdates < 1:
		return fmt.Errorf("--hot-loop-updates must be >= 1, got %d", o.HotLoopUpdates)
	case o.HotLoopWindow <= 0:
		return fmt.Errorf("--hot-loop-window must be > 0, got %s", o.HotLoopWindow)
	case o.Rediscover < 0:
		return fmt.Errorf("--rediscover must be >= 0, got %s", o.Rediscover)
	}
	if err := o.OTLP.Validate(); err != nil {
		return err
	}
	return o.API.Validate()
}

// Run builds the clients and the scope, and runs top.
func (o *TopOptions) Run(ctx context.Context) error {
	if err := o.Audit.prepare(o.ErrOut); err != nil {
		return err
	}
	cfg, stats, err := o.topConfig(ctx)
	if err != nil {
		return err
	}
	cfg.Out, cfg.ErrOut, cfg.JSON, cfg.Limit, cfg.Duration, cfg.Stats = o.Out, o.ErrOut, o.Output == "json", o.Limit, o.Duration, stats
	if o.Output == "" && isTerminal(o.Out) && inputTerminal(o.In) {
		cfg.Screen = toptui.Screen(o.In, o.Out)
	}
	if o.OTLP.Enabled { // the cluster's identity on the spans
		warnTo := o.ErrOut
		if cfg.Screen != nil { // stderr would tear the screen; the line at exit counts the spans lost
			warnTo = io.Discard
		}
		if cfg.Spans, err = tracing.Start(ctx, tracing.ClusterIdentity(ctx, cfg.Watch.REST, o.configFlags), Version, warnTo); err != nil {
			return err
		}
	}
	return top.Run(ctx, cfg)
}

// inputTerminal reports whether r is a terminal (the keys of the live table come from it).
func inputTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// topConfig resolves the resources (or the way to discover them) and builds the clients, as
// watch builds them (internal/clients).
func (o *TopOptions) topConfig(ctx context.Context) (top.Config, *apistats.Recorder, error) {
	set, err := clients.New(o.configFlags, clients.Options{QPS: o.API.QPS, Burst: o.API.Burst, Metadata: true})
	if err != nil {
		return top.Config{}, nil, err
	}
	set.ResolveAPFNames(ctx)
	dc, client, md, restCfg, stats := set.Discovery, set.Dynamic, set.Metadata, set.REST, set.Stats
	cfg := top.Config{
		Watch: watch.Config{Client: client, Metadata: md, Namespace: o.namespace, Stats: stats,
			ListMode: o.API.ListMode, PageSize: o.API.ChunkSize, REST: restCfg, Wire: o.API.Wire},
		Window: o.Window, Interval: o.Interval, HotLoopUpdates: o.HotLoopUpdates, HotLoopWindow: o.HotLoopWindow,
		Rediscover: o.Rediscover, Follow: o.Follow,
		Warn:  func(s string) { fmt.Fprintln(o.ErrOut, "warning: "+printer.Escape(s)) },
		Audit: o.Audit.config(o.ErrOut),
	}
	cfg.Watch.QPS, cfg.Watch.Burst = clients.Limits(o.API.QPS, o.API.Burst)
	if o.resourceArg != "" {
		if cfg.Resources, err = discovery.NewResolver(dc, warnTo(o.ErrOut)).ResolveList(o.resourceArg); err != nil {
			return top.Config{}, nil, err
		}
		return cfg, stats, nil
	}
	cfg.Discover = func(context.Context) ([]discovery.Resource, error) {
		dc.Invalidate()
		lists, err := dc.ServerPreferredResources()
		// A group whose discovery failed (an aggregated API down) leaves the others usable.
		if len(lists) == 0 && err != nil {
			return nil, err
		}
		res := discovery.Watchable(lists)
		if len(res) == 0 {
			return nil, errors.New("the server lists no resource that can be listed and watched")
		}
		return res, nil
	}
	return cfg, stats, nil
}
