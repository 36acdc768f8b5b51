package cmd

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// watchTargets is what a watch resolves before it starts: the server, the resources (the
// watched ones, those --owned and --events follow) and the clients.
type watchTargets struct {
	server    *version.Info
	resources []discovery.Resource
	owned     *discovery.Owned    // --owned; nil without it
	eventsRes *discovery.Resource // --events; nil without it
	restCfg   *rest.Config
	client    dynamic.Interface
	stats     *apistats.Recorder
}

// resolveTargets asks the server what the arguments name, builds the clients and reads what the
// printer needs from the API (CRD printer columns), once.
func (o *WatchOptions) resolveTargets(ctx context.Context) (*watchTargets, error) {
	dc, err := o.configFlags.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	// One cheap request first: an unreachable server fails here, within --request-timeout,
	// instead of the informer retrying forever behind a disk-cached discovery. It stays before
	// the discovery's own requests, not beside them: two first requests at once dial two
	// connections, and at -v=6 and above client-go's request logger then races with itself
	// (a dial's timing callback writing after its request was served by the other connection;
	// the race detector's build of test/e2e caught it).
	sv, err := dc.ServerVersion()
	if err != nil {
		return nil, err
	}
	resolver := discovery.NewResolver(dc, warnTo(o.ErrOut))
	resources, err := resolver.ResolveList(o.resourceArg)
	if err != nil {
		return nil, err
	}
	restCfg, err := o.configFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	// --request-timeout bounds discovery and the version check; a watch is long by design.
	restCfg = dynamicConfig(restCfg)
	// Every LIST and WATCH of the informers is accounted for (pkg/apistats), in the transport
	// and the client-side rate limiter.
	stats := apistats.NewRecorder()
	o.API.instrument(restCfg, stats)
	client, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	owned, eventsRes, err := o.resolveFollowed(resolver, resources)
	if err != nil {
		return nil, err
	}
	o.metadataOnlyNotes(owned != nil, eventsRes != nil)
	apf := newAPFNames(ctx, client)
	stats.Resolve = apf.resolve
	if o.API.ListMode == watch.ListModeWatchList {
		if err := watch.EnableWatchList(); err != nil {
			return nil, err
		}
	}
	o.addPrinterColumns(ctx, client, resources, owned)
	return &watchTargets{server: sv, resources: resources, owned: owned, eventsRes: eventsRes, restCfg: restCfg, client: client, stats: stats}, nil
}

// warnTo says a client-go warning (an ambiguous short name) on w, as kubectl does.
func warnTo(w io.Writer) func(string) {
	return func(s string) { fmt.Fprintln(w, "Warning: "+printer.Escape(s)) }
}

// resolveFollowed resolves what --owned and --events follow besides the watched resources; nil
// for a flag not given.
func (o *WatchOptions) resolveFollowed(resolver *discovery.Resolver, resources []discovery.Resource) (*discovery.Owned, *discovery.Resource, error) {
	var owned *discovery.Owned
	if o.Owned {
		var err error
		if owned, err = resolver.ResolveOwned(resources, o.OwnedResources); err != nil {
			return nil, nil, err
		}
		if !owned.Known() {
			fmt.Fprintf(o.ErrOut, "warning: --owned: nothing is known to be owned by %s; name what it owns with --owned-resources (e.g. --owned-resources deployments,configmaps)\n", o.resourceArg)
		}
	}
	var eventsRes *discovery.Resource
	if o.Events {
		res, err := resolver.Resolve("events.v1.events.k8s.io")
		if err != nil {
			return nil, nil, fmt.Errorf("--events: %w", err)
		}
		eventsRes = &res
	}
	return owned, eventsRes, nil
}

// addPrinterColumns reads the CRD printer columns of the watched and owned resources once, here,
// so that the printer never asks the API; an owner's children get the columns too.
func (o *WatchOptions) addPrinterColumns(ctx context.Context, client dynamic.Interface, resources []discovery.Resource, owned *discovery.Owned) {
	withOwned := resources
	if owned != nil {
		withOwned = append(append([]discovery.Resource{}, resources...), owned.Resources...)
	}
	for _, w := range discovery.AddPrinterColumns(ctx, client, withOwned) {
		fmt.Fprintln(o.ErrOut, "warning: "+printer.Escape(w))
	}
	if owned == nil {
		return
	}
	copy(resources, withOwned)
	owned.Resources = withOwned[len(resources):]
	for gk, kids := range owned.Children {
		for i := range kids {
			for _, r := range owned.Resources {
				if r.GVR() == kids[i].GVR() {
					kids[i] = r
				}
			}
		}
		owned.Children[gk] = kids
	}
}

// informerConfig is the informers' configuration, and the hold that puts their lines back in
// the server's order.
func (o *WatchOptions) informerConfig(t *watchTargets) (watch.Config, *watch.Reorder, error) {
	var mdClient metadata.Interface
	var err error
	if o.MetadataOnly {
		if mdClient, err = metadata.NewForConfig(t.restCfg); err != nil {
			return watch.Config{}, nil, err
		}
	}
	cfg := watch.Config{
		Metadata:          mdClient,
		DropManagedFields: o.DropManaged,
		// Every consumer of the watch's lines reads a built-in object typed, or converts it
		// where it needs the map (pkg/printer, --owned, --events).
		TypedObjects:  true,
		Client:        t.client,
		Resources:     t.resources,
		Namespace:     o.informerNamespace(t),
		LabelSelector: o.LabelSelector,
		FieldSelector: o.fieldSelector(),
		Name:          o.name,
		Resync:        o.Resync,
		SyncTimeout:   o.SyncTimeout,
		Queue: watch.QueueConfig{
			Workers: o.Workers, ReconcileTime: o.ReconcileTime, FailRate: o.FailRate, RateLimiter: o.RateLimiter,
		},
		Predicates: o.Display.predicates,
		Owned:      t.owned,
		Events:     t.eventsRes,
		Stats:      t.stats,
		ListMode:   o.API.ListMode,
		PageSize:   o.API.ChunkSize,
		REST:       t.restCfg,
		Wire:       o.API.Wire,
	}
	cfg.QPS, cfg.Burst = o.API.limits()
	if len(o.Display.predicates) > 0 {
		cfg.PredicateStats = &watch.PredicateStats{}
	}
	// Lines of several resources come from several watch streams; put them back in the
	// server's order (a short, bounded hold that also waits for the plugin's own backlog; see
	// watch.Reorder).
	reorder := watch.NewReorder(o.orderWindow())
	if reorder.Window > 0 {
		reorder.InFlight = watch.NewInFlight()
		cfg.InFlight = reorder.InFlight
	}
	return cfg, reorder, nil
}

// openRecording opens --record's file; nil without it.
func (o *WatchOptions) openRecording(t *watchTargets) (*recording.Writer, error) {
	if o.Record == "" {
		return nil, nil
	}
	return printer.NewRecorder(o.Record, recording.Header{ServerVersion: t.server.GitVersion, Flags: o.recordedFlags()},
		t.resources, o.Display.ShowSecrets, Version)
}

// accounted are the resources whose API figures the run reports: the watched ones, and
// those --owned and --events start while the run goes.
func (t *watchTargets) accounted() []discovery.Resource {
	out := append([]discovery.Resource{}, t.resources...)
	if t.owned != nil {
		out = append(out, t.owned.Resources...)
	}
	if t.eventsRes != nil {
		out = append(out, *t.eventsRes)
	}
	return out
}

// informerNamespace is the namespace scope of the informers: the watch's, but every namespace
// when --owned or --events follows cluster-scoped roots only and no -n was given (the namespaced
// objects a cluster-scoped owner owns, and the Events about it, may be in any namespace).
func (o *WatchOptions) informerNamespace(t *watchTargets) string {
	if (t.owned == nil && t.eventsRes == nil) || (o.configFlags != nil && o.configFlags.Namespace != nil && *o.configFlags.Namespace != "") {
		return o.namespace
	}
	for _, r := range t.resources {
		if r.Namespaced {
			return o.namespace
		}
	}
	return ""
}

// metadataOnlyNotes says on stderr what --owned and --events cannot do with --metadata-only.
func (o *WatchOptions) metadataOnlyNotes(owned, events bool) {
	if !o.MetadataOnly {
		return
	}
	if owned {
		fmt.Fprintln(o.ErrOut, "note: --owned with --metadata-only: owners are followed, but a metadata-only object has no spec.selector, so the owned informers list the whole namespace scope")
	}
	if events {
		fmt.Fprintln(o.ErrOut, "note: --events with --metadata-only: Events are read in full (a metadata-only Event has no reason or note); managedFields dropped")
	}
}
