package reenact

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// verdict is what the rule says of one recorded write before it is made: written (""), left
// out by --skip-manager ("skip"), or refused (the reason).
func (t *target) verdict(cfg *Config, s *Step) (skip bool, refusal string) {
	if s.Op != OpDelete && cfg.skips(s.Manager) {
		return true, ""
	}
	return false, cfg.refusal(s, t.namespaced[s.Resource.GVR()])
}

// statePlan says, before anything is written, each recorded write the rule refuses and each
// cluster-scoped write a flag allows, one line each on cfg.Log.
func (t *target) statePlan(cfg *Config, plan *Plan) {
	for _, steps := range [][]Step{plan.Initial, plan.Steps} {
		for i := range steps {
			s := &steps[i]
			skip, why := t.verdict(cfg, s)
			switch {
			case skip:
			case why != "":
				fmt.Fprintln(cfg.Log, printer.Escape("reenact: refused "+cfg.describe(s)+": "+why))
			case !t.namespaced[s.Resource.GVR()]:
				fmt.Fprintln(cfg.Log, printer.Escape("reenact: allowed by --allow-cluster-scoped: "+cfg.describe(s)))
			}
		}
	}
}

// DryRun checks the target as Prepare does (reading only) and writes the plan to out, one line
// per write: the namespaces and CRDs it would create, each recorded write it would make, leave
// out or refuse, and why. It writes nothing to the cluster. It reads the objects the plan does
// not make itself, as the reenactment would before writing them; what the controller under
// test would create meanwhile it cannot know.
func DryRun(ctx context.Context, c *Clients, cfg *Config, plan *Plan, out io.Writer) error {
	t, err := prepare(ctx, c, cfg, plan)
	if err != nil {
		return err
	}
	say := func(format string, a ...any) { fmt.Fprintln(out, printer.Escape(fmt.Sprintf(format, a...))) }
	for i, r := range t.crds {
		from := "the recording"
		if t.copied[i] != nil {
			from = "the source cluster"
		}
		say("create customresourcedefinitions.apiextensions.k8s.io %s.%s (from %s)", r.Resource, r.Group, from)
	}
	for _, ns := range t.create {
		say("create namespaces %s", ns)
	}
	for _, ns := range t.existing {
		say("write into the existing namespace %s (--into-existing)", ns)
	}
	d := &dryRun{c: c, cfg: cfg, t: t, ours: map[string]bool{}}
	for _, steps := range [][]Step{plan.Initial, plan.Steps} {
		for i := range steps {
			say("%s", d.step(ctx, &steps[i]))
		}
	}
	say("reenact (dry run): %d writes, %d left out (--skip-manager), %d refused, %d not written (the target has it already, or not at all); nothing was written", d.writes, d.skipped, d.refused, d.unwritten)
	return nil
}

// dryRun follows a plan without writing: which objects the reenactment would have made by each
// step, and what it would do.
type dryRun struct {
	c    *Clients
	cfg  *Config
	t    *target
	ours map[string]bool // "resource namespace/name": made by an earlier step (or labelled)

	writes, skipped, refused, unwritten int
}

// step is the plan's line for s. An object no earlier step made is read from the target, as
// the player reads it: a create of one it has is not written; an update or delete of one that
// does not carry the reenactment's label is refused.
func (d *dryRun) step(ctx context.Context, s *Step) string {
	key := groupResource(s.Resource) + " " + d.cfg.TargetNamespace(s.Namespace) + "/" + s.Name
	skip, why := d.t.verdict(d.cfg, s)
	switch {
	case skip:
		d.skipped++
		return "skip " + d.cfg.describe(s) + " (--skip-manager)"
	case why != "":
		d.refused++
		return "refuse " + d.cfg.describe(s) + ": " + why
	}
	if !d.ours[key] {
		cur, err := stepClient(d.c, d.cfg, d.t, s).Get(ctx, s.Name, metav1.GetOptions{})
		switch {
		case err == nil && s.Op == OpCreate:
			d.unwritten++
			d.ours[key] = d.cfg.owns(cur)
			return "skip " + d.cfg.describe(s) + ": the target has it already (not written)"
		case err == nil && !d.cfg.owns(cur):
			d.refused++
			return "refuse " + d.cfg.describe(s) + ": " + d.cfg.notOwned()
		case apierrors.IsNotFound(err) && s.Op != OpCreate:
			d.unwritten++
			return "skip " + d.cfg.describe(s) + ": the target does not have it (not written)"
		}
	}
	d.writes++
	d.ours[key] = s.Op != OpDelete
	return d.cfg.describe(s)
}
