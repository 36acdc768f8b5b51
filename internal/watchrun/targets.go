package watchrun

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/internal/clients"
	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
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
	metadata  metadata.Interface // --metadata-only; nil without it
	stats     *apistats.Recorder
}

// resolveTargets asks the server what the arguments name, builds the clients and reads what the
// printer needs from the API (CRD printer columns), once.
func (o *Config) resolveTargets(ctx context.Context) (*watchTargets, error) {
	cs, err := clients.New(o.Flags, clients.Options{QPS: o.API.QPS, Burst: o.API.Burst, Metadata: o.MetadataOnly})
	if err != nil {
		return nil, err
	}
	resolver := discovery.NewResolver(cs.Discovery, warnTo(o.ErrOut))
	resources, err := resolver.ResolveList(o.Resources)
	if err != nil {
		return nil, err
	}
	owned, eventsRes, err := o.resolveFollowed(resolver, resources)
	if err != nil {
		return nil, err
	}
	o.metadataOnlyNotes(owned != nil, eventsRes != nil)
	cs.ResolveAPFNames(ctx)
	if o.API.ListMode == watch.ListModeWatchList {
		if err := watch.EnableWatchList(); err != nil {
			return nil, err
		}
	}
	o.addPrinterColumns(ctx, cs.Dynamic, resources, owned)
	return &watchTargets{server: cs.Server, resources: resources, owned: owned, eventsRes: eventsRes, restCfg: cs.REST, client: cs.Dynamic, metadata: cs.Metadata, stats: cs.Stats}, nil
}

// warnTo says a client-go warning (an ambiguous short name) on w, as kubectl does.
func warnTo(w io.Writer) func(string) {
	return func(s string) { fmt.Fprintln(w, "Warning: "+printer.Escape(s)) }
}

// resolveFollowed resolves what --owned and --events follow besides the watched resources; nil
// for a flag not given.
func (o *Config) resolveFollowed(resolver *discovery.Resolver, resources []discovery.Resource) (*discovery.Owned, *discovery.Resource, error) {
	var owned *discovery.Owned
	if o.Owned {
		var err error
		if owned, err = resolver.ResolveOwned(resources, o.OwnedResources); err != nil {
			return nil, nil, err
		}
		if !owned.Known() {
			fmt.Fprintf(o.ErrOut, "warning: --owned: nothing is known to be owned by %s; name what it owns with --owned-resources (e.g. --owned-resources deployments,configmaps)\n", o.Resources)
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
func (o *Config) addPrinterColumns(ctx context.Context, client dynamic.Interface, resources []discovery.Resource, owned *discovery.Owned) {
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
func (o *Config) informerConfig(t *watchTargets) (watch.Config, *watch.Reorder, error) {
	cfg := watch.Config{
		Metadata:          t.metadata,
		DropManagedFields: o.DropManaged,
		// Every consumer of the watch's lines reads a built-in object typed, or converts it
		// where it needs the map (pkg/printer, --owned, --events).
		TypedObjects:  true,
		Client:        t.client,
		Resources:     t.resources,
		Namespace:     o.informerNamespace(t),
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		Name:          o.Name,
		Resync:        o.Resync,
		SyncTimeout:   o.SyncTimeout,
		Queue:         o.Queue,
		Predicates:    o.Predicates,
		Owned:         t.owned,
		Events:        t.eventsRes,
		Stats:         t.stats,
		ListMode:      o.API.ListMode,
		PageSize:      o.API.ChunkSize,
		REST:          t.restCfg,
		Wire:          o.API.Wire,
	}
	cfg.QPS, cfg.Burst = clients.Limits(o.API.QPS, o.API.Burst)
	if len(o.Predicates) > 0 {
		cfg.PredicateStats = &watch.PredicateStats{}
	}
	// Lines of several resources come from several watch streams; put them back in the
	// server's order (a short, bounded hold that also waits for the plugin's own backlog; see
	// watch.Reorder).
	reorder := watch.NewReorder(o.OrderWindow)
	if reorder.Window > 0 {
		reorder.InFlight = watch.NewInFlight()
		cfg.InFlight = reorder.InFlight
	}
	return cfg, reorder, nil
}

// openRecording opens --record's file; nil without it. Its header names the cluster, for the
// spans a replay exports (read with a client of its own: the run's accounts only the informers).
func (o *Config) openRecording(ctx context.Context, t *watchTargets) (*recording.Writer, error) {
	if o.Record == "" {
		return nil, nil
	}
	h := recording.Header{ServerVersion: t.server.GitVersion, Flags: o.RecordedFlags}
	if cfg, err := o.Flags.ToRESTConfig(); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // a stalled server names no uid
		defer cancel()
		id := tracing.ClusterIdentity(ctx, cfg, o.Flags)
		h.Cluster = &recording.Cluster{Name: id.ClusterName, UID: id.ClusterUID}
	}
	return printer.NewRecorder(o.Record, h, t.resources, o.ShowSecrets, o.Version)
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
func (o *Config) informerNamespace(t *watchTargets) string {
	if (t.owned == nil && t.eventsRes == nil) || (o.Flags != nil && o.Flags.Namespace != nil && *o.Flags.Namespace != "") {
		return o.Namespace
	}
	for _, r := range t.resources {
		if r.Namespaced {
			return o.Namespace
		}
	}
	return ""
}

// metadataOnlyNotes says on stderr what --owned and --events cannot do with --metadata-only.
func (o *Config) metadataOnlyNotes(owned, events bool) {
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
