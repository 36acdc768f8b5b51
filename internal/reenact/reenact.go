// Package reenact plays a recording (kubectl informer watch --record) into a real API server:
// the objects as they stood at the recording's start, then every recorded create, update and
// delete, in order and at the recorded pace, each with its recorded writer's field manager, so
// that a controller under test, running against that server, meets the same incident. Writes
// of the managers named in Config.SkipManagers are left out: the controller makes its own.
//
// It is the one part of kubectl-informer that writes to a cluster (NewClients).
package reenact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
)

// Label is on every object (and namespace) a reenactment creates; its value is the
// reenactment's name.
const Label = "kubectl-informer.dev/reenactment"

// Config is one reenactment.
type Config struct {
	// Name names the reenactment: the value of Label on what it creates.
	Name string
	// NamespaceMap maps recorded namespaces to the target's; a recorded namespace it does not
	// name becomes "<namespace>-<Name>".
	NamespaceMap map[string]string
	// IntoExisting allows writing into target namespaces that exist already (by default a
	// reenactment writes only into namespaces it creates).
	IntoExisting bool
	// AllowClusterScoped names the cluster-scoped resources whose recorded objects may be
	// written (--allow-cluster-scoped); every other cluster-scoped object is refused.
	AllowClusterScoped []string
	// AllowPrivileged allows RBAC, admission, CRD and APIService objects (--allow-privileged-kinds).
	AllowPrivileged bool
	// Speed: 0 plays as fast as possible, 1 at the recorded pace, 10 ten times faster.
	Speed float64
	// SkipManagers are field managers whose recorded writes are not played.
	SkipManagers []string
	// CreateCRDs creates a CustomResourceDefinition from the recording for a custom resource
	// the target does not serve (otherwise that is an error, before anything is written).
	CreateCRDs bool
	// CRDSource, when set, is the source cluster (read only): a CRD the target lacks is copied
	// from it (its schema, subresources and columns as they are there) rather than made from the
	// recording.
	CRDSource dynamic.Interface
	// Log receives what the reenactment does and its counts (stderr).
	Log io.Writer
	// PrintRVs writes the recorded -> reenacted resourceVersion map to Log at the end.
	PrintRVs bool
}

// Validate checks the configuration without a server.
func (c *Config) Validate() error {
	if c.Speed < 0 || c.Speed != c.Speed {
		return fmt.Errorf("--speed must be 0 (as fast as possible) or a factor > 0 (1: real time), got %v", c.Speed)
	}
	if c.Name == "" {
		return errors.New("a reenactment needs a name")
	}
	for from, to := range c.NamespaceMap {
		if from == "" || to == "" {
			return fmt.Errorf("--namespace-map %s=%s: both namespaces must be named", from, to)
		}
	}
	return nil
}

// Load reads a recording and turns it into a Plan. A damaged line is an error naming it.
func Load(path string) (*Plan, error) {
	rec, err := replay.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the recording %w", err)
	}
	p := NewPlan(rec.Events)
	if len(p.Initial) == 0 && len(p.Steps) == 0 {
		return nil, fmt.Errorf("the recording %s holds no objects to reenact (was it recorded with --metadata-only or without objects?)", path)
	}
	if rec.Header != nil {
		p.Resources = withHeaderColumns(p.Resources, rec.Header.ResourceList())
	}
	return p, nil
}

// withHeaderColumns gives the resources of a plan what the header knows of them (printer
// columns, for a CRD made from the recording).
func withHeaderColumns(rs, header []discovery.Resource) []discovery.Resource {
	for i := range rs {
		for _, h := range header {
			if h.GVR() == rs[i].GVR() {
				rs[i].PrinterColumns = h.PrinterColumns
			}
		}
	}
	return rs
}

// TargetNamespace is where a recorded namespace's objects go.
func (c *Config) TargetNamespace(recorded string) string {
	if recorded == "" {
		return ""
	}
	if ns, ok := c.NamespaceMap[recorded]; ok {
		return ns
	}
	return recorded + "-" + c.Name
}

// TargetNamespaces are the namespaces the plan writes into, in the plan's order.
func (c *Config) TargetNamespaces(p *Plan) []string {
	var out []string
	for _, ns := range p.Namespaces {
		out = append(out, c.TargetNamespace(ns))
	}
	return out
}

// skips reports whether writes of manager are left out.
func (c *Config) skips(manager string) bool {
	return slices.Contains(c.SkipManagers, manager)
}

// Reenactment is a reenactment whose target is ready: checked, its CRDs and namespaces made.
type Reenactment struct {
	cfg  *Config
	plan *Plan
	pl   *player
}

// Prepare checks the target first (every resource served, or a CRD to make; no namespace
// written into that it did not create, unless IntoExisting; no protected namespace), and
// writes nothing when that fails; it states every recorded write the rule refuses (guard.go)
// and every cluster-scoped one a flag allows; then it creates the CRDs and the namespaces.
func Prepare(ctx context.Context, c *Clients, cfg *Config, plan *Plan) (*Reenactment, error) {
	t, err := prepare(ctx, c, cfg, plan)
	if err != nil {
		return nil, err
	}
	t.statePlan(cfg, plan)
	if err := t.createCRDs(ctx, c, cfg); err != nil {
		return nil, err
	}
	if err := t.createNamespaces(ctx, c, cfg); err != nil {
		return nil, err
	}
	return &Reenactment{cfg: cfg, plan: plan, pl: newPlayer(c, cfg, t)}, nil
}

// Play creates the initial objects and plays the steps at the recorded pace, until they are
// all played or ctx ends; then it says what it did on Config.Log.
func (r *Reenactment) Play(ctx context.Context) (*Stats, error) {
	err := r.pl.initial(ctx, r.plan.Initial)
	if err == nil {
		err = r.pl.play(ctx, r.plan)
	}
	r.pl.stats.report(r.cfg)
	return r.pl.stats, err
}

// WatchArg is the resources of the plan as `kubectl informer watch` takes them:
// resource.version.group, comma-separated.
func WatchArg(p *Plan) string {
	var names []string
	for _, r := range p.Resources {
		names = append(names, fullName(r.GVR()))
	}
	return strings.Join(names, ",")
}

func fullName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		// "configmaps.v1" would read as group v1; the empty group after a dot is the core one.
		return gvr.Resource + "." + gvr.Version + "."
	}
	return gvr.Resource + "." + gvr.Version + "." + gvr.Group
}
