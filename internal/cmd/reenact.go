package cmd

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/kubectl/pkg/util/templates"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/internal/readonly"
	"github.com/kubectl-informer/kubectl-informer/internal/reenact"
	"github.com/kubectl-informer/kubectl-informer/internal/reenactrun"
	"github.com/kubectl-informer/kubectl-informer/internal/watchrun"
)

const reenactExample = `  # Replay an incident into namespace repro of a kind cluster, without widget-operator's
  # recorded writes: the widget-operator build under test, running there, makes its own
  kubectl informer reenact incident.ndjson --context kind-dev --namespace-map demo=repro --skip-manager widget-operator

  # The same, ten times faster, and at the end: what differs from the recording
  kubectl informer reenact incident.ndjson --context kind-dev --skip-manager widget-operator --speed 10 --compare incident.ndjson

  # On a local etcd and kube-apiserver the plugin starts (and stops at the end): run the
  # controller under test with the KUBECONFIG it prints
  kubectl informer reenact incident.ndjson --control-plane --skip-manager widget-operator --compare incident.ndjson

  # Print what it would create, update, delete and refuse, writing nothing
  kubectl informer reenact incident.ndjson --context kind-dev --dry-run

  # Delete what a reenactment created (its namespaces and labelled objects)
  kubectl informer reenact incident.ndjson --context kind-dev --cleanup --name r-x7k2p`

// ReenactOptions holds the flags of `kubectl informer reenact`.
type ReenactOptions struct {
	configFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Name         string
	NamespaceMap []string
	IntoExisting bool
	Speed        float64
	SkipManagers []string
	CreateCRDs   bool
	CRDsFrom     string
	Settle       time.Duration
	Follow       bool
	Compare      string
	Cleanup      bool
	PrintRVs     bool
	// AllowClusterScoped and AllowPrivileged widen what a recording may write; DryRun is
	// "none" or "client" (print the plan, write nothing).
	AllowClusterScoped []string
	AllowPrivileged    bool
	DryRun             string

	cp ControlPlaneFlags
	// watch is the watch of the reenacted objects: its display flags and --record are
	// reenact's.
	watch *WatchOptions

	path string
	cfg  *reenact.Config
}

// NewCmdReenact returns `kubectl informer reenact`.
func NewCmdReenact(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ReenactOptions{configFlags: configFlags, IOStreams: streams, Speed: 1, Settle: 5 * time.Second, DryRun: "none",
		watch: NewWatchOptions(configFlags, streams)}
	cmd := &cobra.Command{
		Use:   "reenact RECORDING (--context CONTEXT | --control-plane)",
		Short: "Play a recorded incident into a cluster, without your controller's writes, and watch it",
		Long: templates.LongDesc(`Play a recording (kubectl informer watch --record) into the cluster of --context:
the objects as they stood at its start, then every recorded create, update and delete, in
order and at the recorded pace, each with its recorded writer's field manager. Writes of the
managers named by --skip-manager are left out, so that the controller under test, running
against that cluster, makes its own. The reenacted objects are watched as 'watch' does.

It writes only into namespaces it creates, labels everything it creates with
kubectl-informer.dev/reenactment=NAME, updates and deletes only objects that carry that
label on the server, and never uses the current context implicitly. Cluster-scoped objects
are refused unless --allow-cluster-scoped names their resource; RBAC, admission webhooks,
CRDs and APIServices unless --allow-privileged-kinds; kube-system, kube-public,
kube-node-lease and default are never written. Each refusal is one line on stderr, and a run
that refused any write exits 1. --dry-run prints the plan and writes nothing.

With --control-plane instead of --context it starts a local etcd and kube-apiserver
(--control-plane=full: also kube-controller-manager, kube-scheduler and a kwok node) on
127.0.0.1, prints the kubeconfig for the controller under test, plays into it, and stops
every process it started when it ends. The binaries come from --control-plane-assets,
$KUBEBUILDER_ASSETS or the cache 'make testcluster' fills.`),
		Example: templates.Examples(reenactExample),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("reenact takes one RECORDING (a file written by kubectl informer watch --record); see 'kubectl informer reenact -h'")
			}
			return nil
		},
		RunE: runE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", "", "The reenactment's name: the value of its label on what it creates, and the default suffix of its namespaces (default: r-<random>).")
	f.StringSliceVar(&o.NamespaceMap, "namespace-map", nil, "Where a recorded namespace's objects go, FROM=TO (repeatable); default: FROM-<name>.")
	f.BoolVar(&o.IntoExisting, "into-existing", false, "Allow writing into target namespaces that exist already (by default only into namespaces the reenactment creates).")
	f.Float64Var(&o.Speed, "speed", o.Speed, "1: at the recorded pace (real time); 10: ten times faster; 0: as fast as possible.")
	f.StringArrayVar(&o.SkipManagers, "skip-manager", nil, "Do not play the writes of this field manager (repeatable): the controller under test makes its own.")
	f.BoolVar(&o.CreateCRDs, "create-crds", false, "Create a CRD from the recording for a custom resource the cluster does not serve (its schema keeps every field).")
	f.StringVar(&o.CRDsFrom, "crds-from-context", "", "Copy a CRD the cluster does not serve from the cluster of this context (the source; only read).")
	f.DurationVar(&o.Settle, "settle", o.Settle, "How long to keep watching after the last recorded write was played.")
	f.BoolVar(&o.Follow, "follow", false, "Keep watching after the last write and --settle, until interrupted.")
	f.StringVar(&o.Compare, "compare", "", "At the end, compare the reenactment with this recording (usually RECORDING itself): updates per object and per writer, hot loops in one and not the other.")
	f.BoolVar(&o.Cleanup, "cleanup", false, "Delete what the reenactment --name created (every reenactment's, without --name) instead of playing.")
	f.StringSliceVar(&o.AllowClusterScoped, "allow-cluster-scoped", nil, "Cluster-scoped resources whose recorded objects may be written (RESOURCE[,...]: clusterroles, namespaces, ...); every other cluster-scoped object is refused.")
	f.BoolVar(&o.AllowPrivileged, "allow-privileged-kinds", false, "Allow writing RBAC objects, admission webhooks and policies, CRDs and APIServices from the recording (refused otherwise, even when namespaced).")
	f.StringVar(&o.DryRun, "dry-run", o.DryRun, `Must be "none" or "client". If client, only print the plan (what would be created, updated, deleted and refused, where), reading the cluster, writing nothing.`)
	f.Lookup("dry-run").NoOptDefVal = "client"
	f.BoolVar(&o.PrintRVs, "print-rv-map", false, "At the end, print each recorded resourceVersion and the one its reenacted write made.")
	f.DurationVar(&o.watch.Timeout, "timeout", 0, "Stop after this long (with --follow: else it runs until interrupted); 0: no limit.")
	o.cp.AddFlags(cmd)
	// The controller's log, as watch reads it: ControllerReconcile lines, counted per object
	// by --compare.
	o.watch.Logs.AddFlags(f)
	f.StringVar(&o.watch.Record, "record", "", "Also write the reenactment's stream to this file, as watch --record does.")
	o.watch.Display.AddFlags(cmd)
	return cmd
}

// Complete takes the recording's path.
func (o *ReenactOptions) Complete(_ *cobra.Command, args []string) error {
	o.path = args[0]
	return nil
}

// Validate checks the flags; the context is named explicitly before anything else is done.
func (o *ReenactOptions) Validate() error {
	context := ""
	if o.configFlags.Context != nil {
		context = *o.configFlags.Context
	}
	if err := o.cp.Validate(context, o.Cleanup); err != nil {
		return err
	}
	if context == "" && o.cp.Mode == "" {
		return errors.New("reenact writes to a cluster: name its context with --context (the current context is never used implicitly); nothing was written")
	}
	name := o.Name // --cleanup without --name: every reenactment's
	if name == "" {
		name = "r-" + strings.ToLower(rand.Text()[:5])
	}
	nsMap := map[string]string{}
	for _, m := range o.NamespaceMap {
		from, to, ok := strings.Cut(m, "=")
		if !ok {
			return fmt.Errorf("--namespace-map %q: want FROM=TO (e.g. demo=repro)", m)
		}
		nsMap[from] = to
	}
	switch o.DryRun {
	case "none", "client":
	case "server":
		return errors.New(`--dry-run=server is not supported by reenact (each recorded write depends on the ones before it): --dry-run=client prints the plan`)
	default:
		return fmt.Errorf(`--dry-run must be "none" or "client", got %q`, o.DryRun)
	}
	if o.DryRun == "client" && o.Cleanup {
		return errors.New("--dry-run with --cleanup is not supported: --cleanup deletes only objects labelled " + reenact.Label + "=NAME (list them with kubectl get -l)")
	}
	o.cfg = &reenact.Config{Name: name, NamespaceMap: nsMap, IntoExisting: o.IntoExisting, Speed: o.Speed,
		SkipManagers: o.SkipManagers, CreateCRDs: o.CreateCRDs, Log: o.ErrOut, PrintRVs: o.PrintRVs,
		AllowClusterScoped: o.AllowClusterScoped, AllowPrivileged: o.AllowPrivileged}
	if err := o.cfg.Validate(); err != nil {
		return err
	}
	if o.Settle < 0 {
		return fmt.Errorf("--settle must be >= 0, got %s", o.Settle)
	}
	return o.watch.Display.Validate()
}

// Run permits reenact's writes and runs the reenactment (internal/reenactrun).
func (o *ReenactOptions) Run(ctx context.Context) error {
	// The one command that writes objects: its explicit opt-in to internal/readonly's check.
	readonly.Permit(readonly.Allow{Writes: true})
	if err := checkKubeconfig(o.configFlags); err != nil && o.cp.Mode == "" {
		return err
	}
	return reenactrun.Run(ctx, o.config())
}

// config is the reenactment's typed configuration.
func (o *ReenactOptions) config() reenactrun.Config {
	c := reenactrun.Config{Flags: o.configFlags, Out: o.Out, ErrOut: o.ErrOut, Recording: o.path, Reenact: o.cfg,
		ControlPlane: reenactrun.ControlPlane{Start: o.cp.Mode != "", Full: o.cp.Mode == controlPlaneFull, Assets: o.cp.Assets, Keep: o.cp.Keep},
		DryRun:       o.DryRun == "client", Cleanup: o.Cleanup, Name: o.Name, Settle: o.Settle, Follow: o.Follow,
		Compare: o.Compare, Record: o.watch.Record, Watch: o.watchConfig}
	if o.CRDsFrom != "" {
		c.CRDSource = o.sourceClient
	}
	return c
}

// watchConfig is the watch of the reenacted objects, with reenact's display flags, controllers'
// logs and --record, as `kubectl informer watch` would watch them.
func (o *ReenactOptions) watchConfig(t reenactrun.WatchTarget) (watchrun.Config, error) {
	w := o.watch
	w.resourceArg, w.onSynced, w.Record, w.namespace = t.Resources, t.OnSynced, t.Record, t.Namespace
	if t.AllNamespaces {
		w.AllNamespaces, w.LabelSelector = true, t.LabelSelector
	}
	if err := w.Validate(); err != nil {
		return watchrun.Config{}, err
	}
	return w.config(), nil
}

// sourceClient reads the cluster of --crds-from-context, with the same kubeconfig.
func (o *ReenactOptions) sourceClient() (dynamic.Interface, error) {
	src := newConfigFlags() // through the read-only check too
	src.KubeConfig, src.Context = o.configFlags.KubeConfig, &o.CRDsFrom
	cfg, err := src.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("--crds-from-context %s: %w", o.CRDsFrom, err)
	}
	return reenact.NewSourceClient(cfg)
}
