// Package reenactrun is the orchestrator of `kubectl informer reenact`: from a typed Config it
// loads the recording, starts a control plane of its own when asked, builds the clients that
// write (internal/reenact), and plays the recording while a watch of the reenacted objects
// (internal/watchrun) runs beside it; or prints the plan, or cleans up.
package reenactrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/internal/reenact"
	"github.com/kubectl-informer/kubectl-informer/internal/watchrun"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
)

// Config is one reenactment, as the command's flags say it.
type Config struct {
	// Flags are the target's kubeconfig flags; a control plane of its own replaces their
	// kubeconfig and context.
	Flags       *genericclioptions.ConfigFlags
	Out, ErrOut io.Writer

	// Recording is the recording's path; Reenact what is played of it, and where.
	Recording string
	Reenact   *reenact.Config
	// CRDSource is the client of --crds-from-context's cluster; nil without it.
	CRDSource func() (dynamic.Interface, error)
	// ControlPlane is --control-plane's: a cluster of its own instead of --context's.
	ControlPlane ControlPlane

	// DryRun prints the plan, writing nothing; Cleanup deletes what the reenactment Name ("":
	// every reenactment) created instead of playing.
	DryRun, Cleanup bool
	Name            string
	// Settle is how long the watch goes on after the last write; Follow: until interrupted.
	Settle time.Duration
	Follow bool
	// Compare is the recording to compare the reenactment with at the end ("": none).
	Compare string
	// Record is where the reenactment's stream is recorded ("": nowhere, or, with Compare, a
	// temporary file).
	Record string
	// Watch is the watch of the reenacted objects, for the target the plan names.
	Watch func(WatchTarget) (watchrun.Config, error)
}

// ControlPlane says whether, and how, reenact starts a control plane of its own.
type ControlPlane struct {
	// Start starts one: etcd and kube-apiserver, and, Full, kube-controller-manager,
	// kube-scheduler and a kwok node.
	Start, Full bool
	// Assets is the binaries' directory ("": found); Keep leaves it running at the end.
	Assets string
	Keep   bool
}

// WatchTarget is what the watch of a reenactment watches: the plan's resources in its one
// target namespace or, with several, across namespaces by the reenactment's label.
type WatchTarget struct {
	Resources, Namespace string
	AllNamespaces        bool
	LabelSelector        string
	// Record is the watch's --record; OnSynced is called once its initial lists are in.
	Record   string
	OnSynced func()
}

// Run reads the recording, then plays it and watches the reenacted objects (or prints the plan,
// or cleans up).
func Run(ctx context.Context, c Config) (retErr error) {
	o := &c
	plan, err := reenact.Load(o.Recording)
	if err != nil {
		return err
	}
	if o.CRDSource != nil { // read with the user's kubeconfig, before --control-plane replaces it
		if o.Reenact.CRDSource, err = o.CRDSource(); err != nil {
			return err
		}
	}
	if o.ControlPlane.Start {
		// A process of the control plane that dies ends the run, and that is its error.
		parent := ctx
		cpCtx, died := context.WithCancelCause(ctx)
		defer died(nil)
		kubeconfig, kubeContext, stop, err := o.controlPlane(cpCtx, died)
		if err != nil {
			return err
		}
		defer stop()
		o.Flags.KubeConfig, o.Flags.Context = &kubeconfig, &kubeContext
		defer func() {
			if cause := context.Cause(cpCtx); cause != nil && parent.Err() == nil && !errors.Is(cause, context.Canceled) {
				retErr = cause
			}
		}()
		ctx = cpCtx
	}
	restCfg, err := o.Flags.ToRESTConfig()
	if err != nil {
		return err
	}
	clients, err := reenact.NewClients(restCfg)
	if err != nil {
		return err
	}
	if o.DryRun {
		return reenact.DryRun(ctx, clients, o.Reenact, plan, o.Out)
	}
	if o.Cleanup {
		n, err := reenact.Cleanup(ctx, clients, plan, o.Name)
		fmt.Fprintf(o.ErrOut, "reenact: deleted %d objects and namespaces\n", n)
		return err
	}
	if o.Compare != "" && o.Record == "" {
		dir, err := os.MkdirTemp("", "kubectl-informer-reenact-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.Record = filepath.Join(dir, "reenacted.ndjson")
	}
	if err := o.play(ctx, clients, plan); err != nil {
		return err
	}
	if o.Compare != "" {
		return o.compare()
	}
	return nil
}

// play prepares the target, starts the watch of the reenacted objects and, once its initial
// lists are in, plays the recording; then it watches until --settle has passed (or, --follow,
// until interrupted).
func (o *Config) play(ctx context.Context, clients *reenact.Clients, plan *reenact.Plan) error {
	r, err := reenact.Prepare(ctx, clients, o.Reenact, plan)
	if err != nil {
		return err
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	synced := make(chan struct{})
	watched := make(chan error, 1)
	go func() { watched <- o.runWatch(watchCtx, plan, func() { close(synced) }) }()
	select {
	case err := <-watched: // the watch failed, or was interrupted, before its lists were in
		return err
	case <-synced:
	}
	into := strings.Join(o.Reenact.TargetNamespaces(plan), ", ")
	if into == "" {
		into = "no namespace"
	}
	fmt.Fprintf(o.ErrOut, "reenact: reenactment %s into %s (context %s): playing %d initial objects and %d writes\n",
		o.Reenact.Name, into, *o.Flags.Context, len(plan.Initial), len(plan.Steps))
	playCtx, stopPlaying := context.WithCancel(ctx)
	defer stopPlaying()
	refused := 0
	played := make(chan error, 1)
	go func() {
		stats, err := r.Play(playCtx)
		refused = stats.Refused // read after <-played
		played <- err
	}()
	var playErr error
	select {
	case playErr = <-played:
	case err := <-watched: // the watch failed (or was interrupted): stop playing
		stopPlaying()
		if perr := <-played; err == nil {
			err = perr
		}
		return err
	}
	switch {
	case playErr != nil: // a write the server refused ends the run: nothing more is played
		stopWatching()
	case !o.Follow:
		select {
		case <-time.After(o.Settle):
		case <-ctx.Done():
		}
		stopWatching()
	}
	if err := <-watched; err != nil && playErr == nil {
		return err
	}
	if playErr == nil && refused > 0 {
		playErr = fmt.Errorf("reenact refused %d recorded writes (each stated above, with the flag that allows it where one does)", refused)
	}
	return playErr
}

// runWatch watches the reenacted objects as `kubectl informer watch` does: in the one target
// namespace, or, with several, across namespaces by the reenactment's label.
func (o *Config) runWatch(ctx context.Context, plan *reenact.Plan, synced func()) error {
	t := WatchTarget{Resources: reenact.WatchArg(plan), Record: o.Record, OnSynced: synced}
	switch nss := o.Reenact.TargetNamespaces(plan); len(nss) {
	case 1:
		t.Namespace = nss[0]
	default:
		t.AllNamespaces, t.LabelSelector = true, reenact.Label+"="+o.Reenact.Name
	}
	cfg, err := o.Watch(t)
	if err != nil {
		return err
	}
	return watchrun.Run(ctx, cfg)
}

// compare prints what differs between --compare's recording and the reenactment's.
func (o *Config) compare() error {
	orig, err := replay.Open(o.Compare)
	if err != nil {
		return fmt.Errorf("--compare: %w", err)
	}
	re, err := replay.Open(o.Record)
	if err != nil {
		return fmt.Errorf("reading the reenactment's recording: %w", err)
	}
	reenact.Compare(o.ErrOut, reenact.NewTally(orig.Events, o.Reenact.TargetNamespace), reenact.NewTally(re.Events, nil), o.Reenact.SkipManagers)
	return nil
}
