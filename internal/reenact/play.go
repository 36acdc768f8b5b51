package reenact

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
)

// RV pairs a recorded resourceVersion with the one the reenacted write made.
type RV struct {
	Resource, Namespace, Name string
	Recorded, Reenacted       string
}

// Stats counts what a reenactment did.
type Stats struct {
	Initial, Created, Updated, Deleted int
	// Skipped counts the writes of --skip-manager managers left out, by manager.
	Skipped map[string]int
	// Already counts writes the target already held (the controller under test wrote it, or
	// created the object): not written. Conflicts counts writes whose fields the target held
	// with other values than the recording had before them (written anyway). Missing counts
	// updates and deletes of objects the target does not have (their create was skipped).
	Already, Conflicts, Missing int
	// NoOps counts recorded updates that changed nothing a client writes.
	NoOps int
	// Bound counts the recorded bindings of pods played through pods/binding (among Updated);
	// Unplayable counts recorded writes the target made impossible (each stated).
	Bound, Unplayable int
	// Creates and Deletes count the recorded creates and deletes reached (after the initial
	// lists): each is played, skipped, refused or stated as not played.
	Creates, Deletes int
	// Unplayed counts the steps not reached: the run was stopped first.
	Unplayed int
	// Refused counts the recorded writes the reenactment would not make (guard.go): each was
	// stated on its own line.
	Refused int
	// RVs is the recorded -> reenacted resourceVersion map, in the order of the writes.
	RVs []RV
}

// Conflicted is every write that met the controller under test: already there, or diverged.
func (s *Stats) Conflicted() int { return s.Already + s.Conflicts + s.Missing }

type player struct {
	c     *Clients
	cfg   *Config
	t     *target
	stats *Stats
	uids  map[string]string // recorded uid -> reenacted uid
}

func newPlayer(c *Clients, cfg *Config, t *target) *player {
	return &player{c: c, cfg: cfg, t: t, stats: &Stats{Skipped: map[string]int{}}, uids: map[string]string{}}
}

func (p *player) client(s *Step) dynamic.ResourceInterface {
	return stepClient(p.c, p.cfg, p.t, s)
}

// stepClient is the client of s's resource: in its target namespace when the target has the
// resource namespaced.
func stepClient(c *Clients, cfg *Config, t *target, s *Step) dynamic.ResourceInterface {
	r := c.Dynamic.Resource(s.Resource.GVR())
	if t.namespaced[s.Resource.GVR()] {
		return r.Namespace(cfg.TargetNamespace(s.Namespace))
	}
	return r
}

// initial creates the objects of the initial lists, owners first where the recording has them
// in another order (a second pass for those whose owners came later).
// Interrupted (ctx ended), it counts what it did not create as unplayed and returns no error.
func (p *player) initial(ctx context.Context, steps []Step) error {
	pending, done := steps, 0
	for pass := 0; pass < 3 && len(pending) > 0; pass++ {
		var later []Step
		for _, s := range pending {
			if pass < 2 && p.ownerPending(&s, pending) {
				later = append(later, s)
				continue
			}
			err := p.create(ctx, &s, true)
			if ctx.Err() != nil { // the run was stopped: what was played is reported
				p.stats.Unplayed = len(steps) - done
				return nil
			}
			if err != nil {
				return err
			}
			done++
		}
		pending = later
	}
	return nil
}

// ownerPending reports whether an owner of s is among steps and not created yet.
func (p *player) ownerPending(s *Step, steps []Step) bool {
	for _, o := range s.Object.GetOwnerReferences() {
		if _, done := p.uids[string(o.UID)]; done {
			continue
		}
		for _, other := range steps {
			if other.Object.GetUID() == o.UID {
				return true
			}
		}
	}
	return false
}

// play plays the steps at the recorded pace.
func (p *player) play(ctx context.Context, plan *Plan) error {
	var pacer *replay.Pacer
	if p.cfg.Speed > 0 {
		pacer = &replay.Pacer{Speed: p.cfg.Speed}
		pacer.Delay(plan.Start, time.Now()) // the origin: the initial lists were in
	}
	for i := range plan.Steps {
		s := &plan.Steps[i]
		if pacer != nil {
			_ = pacer.Wait(ctx, s.Time, func() error { return nil })
		}
		if ctx.Err() != nil { // the run was stopped: what was played is reported
			p.stats.Unplayed += len(plan.Steps) - i
			return nil
		}
		var err error
		switch s.Op {
		case OpCreate:
			p.stats.Creates++
			err = p.create(ctx, s, false)
		case OpUpdate:
			err = p.update(ctx, s)
		case OpDelete:
			p.stats.Deletes++
			err = p.delete(ctx, s)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// create creates s's object with its creator's field manager, then its status through the
// status subresource with the status writer's, when the resource has one.
func (p *player) create(ctx context.Context, s *Step, initial bool) error {
	if p.cfg.skips(s.Manager) {
		p.stats.Skipped[s.Manager]++
		return nil
	}
	if p.refused(s) {
		return nil
	}
	obj := writable(s.Object, p.cfg.TargetNamespace(s.Namespace), Label, p.cfg.Name, p.uids)
	out, err := p.client(s).Create(ctx, obj, metav1.CreateOptions{FieldManager: s.Manager})
	if apierrors.IsAlreadyExists(err) {
		p.stats.Already++
		why := "the target has it already"
		if cur, gerr := p.client(s).Get(ctx, s.Name, metav1.GetOptions{}); gerr == nil {
			p.uids[string(s.Object.GetUID())] = string(cur.GetUID())
			if !p.cfg.owns(cur) {
				m, _ := creator(cur)
				why += ", created there by " + m + " (not by this reenactment: its later writes are refused)"
			}
		}
		p.notPlayed(s, why)
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating %s %s: %w", s.Resource.Resource, p.key(s), err)
	}
	p.uids[string(s.Object.GetUID())] = string(out.GetUID())
	if initial {
		p.stats.Initial++
	} else {
		p.stats.Created++
	}
	p.rv(s, out)
	status, has, _ := unstructured.NestedFieldNoCopy(s.Object.Object, "status")
	sm := statusManager(s.Object)
	if !has || !p.t.status[s.Resource.GVR()] || sm == "" {
		return nil
	}
	if p.cfg.skips(sm) {
		p.stats.Skipped[sm]++
		return nil
	}
	out, err = p.patch(ctx, s, map[string]any{"status": status}, sm, "status")
	if err != nil {
		return fmt.Errorf("writing the status of %s %s: %w", s.Resource.Resource, p.key(s), err)
	}
	p.rv(s, out)
	return nil
}

// update plays a recorded update as the merge patch from the recorded old object to the new
// one, through the subresource the recorded write used, with its writer's field manager. The
// object is read first: one the reenactment did not create is refused; the patch carries the
// resourceVersion read, so that what is written is what was checked (a conflict reads again).
func (p *player) update(ctx context.Context, s *Step) error {
	if p.cfg.skips(s.Manager) {
		p.stats.Skipped[s.Manager]++
		return nil
	}
	if p.refused(s) {
		return nil
	}
	ns := p.cfg.TargetNamespace(s.Namespace)
	old := writable(s.Old, ns, Label, p.cfg.Name, p.uids)
	cur := writable(s.Object, ns, Label, p.cfg.Name, p.uids)
	patch := mergePatch(old.Object, cur.Object)
	undo := mergePatch(cur.Object, old.Object)
	sub := ""
	if p.t.status[s.Resource.GVR()] {
		main, status := split(patch)
		patch = main
		if s.Subresource == "status" {
			patch, sub = status, "status"
		}
	}
	if len(patch) == 0 {
		p.stats.NoOps++
		return nil
	}
	if node := bindingNode(s, patch); node != "" {
		res, err := p.bindStep(ctx, s, node)
		if err != nil || res == bindDone {
			return err
		}
		if patch = withoutNodeName(patch); len(patch) == 0 {
			switch res {
			case bindBound:
				p.stats.Updated++
			case bindHeld:
				p.stats.Already++
			}
			return nil
		}
	}
	for attempt := 1; ; attempt++ {
		err := p.updateOnce(ctx, s, patch, undo, sub)
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		return err
	}
}

// updateOnce reads the object, checks it is the reenactment's, and patches it at the
// resourceVersion read.
func (p *player) updateOnce(ctx context.Context, s *Step, patch, undo map[string]any, sub string) error {
	target, err := p.client(s).Get(ctx, s.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		p.stats.Missing++
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", s.Resource.Resource, p.key(s), err)
	}
	if !p.cfg.owns(target) {
		p.refuseNotOwned(s)
		return nil
	}
	if applied(target.Object, patch) {
		p.stats.Already++
		return nil
	}
	// The target moved on from what the recorded writer saw: said, and written as recorded.
	diverged := !applied(target.Object, restrict(undo, patch))
	out, err := p.patch(ctx, s, atVersion(patch, target.GetResourceVersion()), s.Manager, sub)
	if apierrors.IsNotFound(err) {
		p.stats.Missing++
		return nil
	}
	if apierrors.IsConflict(err) {
		return err
	}
	if err != nil {
		return fmt.Errorf("updating %s %s as %s: %w", s.Resource.Resource, p.key(s), s.Manager, err)
	}
	if diverged {
		p.stats.Conflicts++
	}
	p.stats.Updated++
	p.rv(s, out)
	return nil
}

// atVersion is patch with metadata.resourceVersion set to rv: the server refuses it (a
// conflict) when the object changed since it was read.
func atVersion(patch map[string]any, rv string) map[string]any {
	if rv == "" {
		return patch
	}
	out := maps.Clone(patch)
	md, _ := out["metadata"].(map[string]any)
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = rv
	out["metadata"] = md
	return out
}

// refused reports whether the rule forbids s (guard.go), counting it; Prepare stated it.
func (p *player) refused(s *Step) bool {
	if p.cfg.refusal(s, p.t.namespaced[s.Resource.GVR()]) == "" {
		return false
	}
	p.stats.Refused++
	return true
}

// notPlayed states a recorded create or delete the target made unnecessary or impossible
// (counted by the caller).
func (p *player) notPlayed(s *Step, why string) {
	fmt.Fprintln(p.cfg.Log, printer.Escape("reenact: not played "+p.cfg.describe(s)+": "+why))
}

// refuseNotOwned states and counts the refusal of a write to an object the reenactment did
// not create.
func (p *player) refuseNotOwned(s *Step) {
	p.stats.Refused++
	fmt.Fprintln(p.cfg.Log, printer.Escape("reenact: refused "+p.cfg.describe(s)+": "+p.cfg.notOwned()))
}

// restrict keeps the keys of undo that patch writes.
func restrict(undo, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range patch {
		u, ok := undo[k]
		if !ok {
			continue
		}
		um, uIsMap := u.(map[string]any)
		pm, pIsMap := v.(map[string]any)
		if uIsMap && pIsMap {
			out[k] = restrict(um, pm)
			continue
		}
		out[k] = u
	}
	return out
}

// delete deletes s's object when the server's copy is the reenactment's, with that copy's uid
// as a precondition (an object replaced meanwhile is not deleted).
func (p *player) delete(ctx context.Context, s *Step) error {
	if p.refused(s) {
		return nil
	}
	target, err := p.client(s).Get(ctx, s.Name, metav1.GetOptions{})
	if err == nil && !p.cfg.owns(target) {
		p.refuseNotOwned(s)
		return nil
	}
	if err == nil {
		uid := target.GetUID()
		err = p.client(s).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	}
	if apierrors.IsNotFound(err) {
		p.stats.Missing++
		p.notPlayed(s, "the target does not have it (its create was not played, or it is gone already)")
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", s.Resource.Resource, p.key(s), err)
	}
	p.stats.Deleted++
	return nil
}

func (p *player) patch(ctx context.Context, s *Step, patch map[string]any, manager, sub string) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	return p.client(s).Patch(ctx, s.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: manager}, subs...)
}

func (p *player) rv(s *Step, out *unstructured.Unstructured) {
	p.stats.RVs = append(p.stats.RVs, RV{Resource: s.Resource.Resource, Namespace: p.cfg.TargetNamespace(s.Namespace), Name: s.Name, Recorded: s.RecordedRV, Reenacted: out.GetResourceVersion()})
}

func (p *player) key(s *Step) string {
	if ns := p.cfg.TargetNamespace(s.Namespace); ns != "" {
		return ns + "/" + s.Name
	}
	return s.Name
}

// report says what was played, skipped and met on cfg.Log.
func (s *Stats) report(cfg *Config) {
	fmt.Fprintf(cfg.Log, "reenact: played %d initial objects, %d creates, %d updates, %d deletes\n", s.Initial, s.Created, s.Updated, s.Deleted)
	fmt.Fprintf(cfg.Log, "reenact: recorded creates %d: %d played; recorded deletes %d: %d played (the rest skipped, refused or not played, each counted here and stated above)\n", s.Creates, s.Created, s.Deletes, s.Deleted)
	if len(s.Skipped) > 0 {
		var parts []string
		for _, m := range slices.Sorted(maps.Keys(s.Skipped)) {
			parts = append(parts, fmt.Sprintf("%d by %s", s.Skipped[m], printer.Escape(m)))
		}
		fmt.Fprintf(cfg.Log, "reenact: skipped %s (--skip-manager)\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(cfg.Log, "reenact: %d conflicts: %d writes the target already held (not written), %d over values the target had changed (written as recorded), %d of objects the target did not have\n",
		s.Conflicted(), s.Already, s.Conflicts, s.Missing)
	if s.Unplayed > 0 {
		fmt.Fprintf(cfg.Log, "reenact: stopped before the last %d recorded writes (interrupted)\n", s.Unplayed)
	}
	if s.Refused > 0 {
		fmt.Fprintf(cfg.Log, "reenact: refused %d recorded writes (each stated above)\n", s.Refused)
	}
	if s.Bound > 0 {
		fmt.Fprintf(cfg.Log, "reenact: %d of the updates bound a pod to its recorded node (pods/binding)\n", s.Bound)
	}
	if s.Unplayable > 0 {
		fmt.Fprintf(cfg.Log, "reenact: %d recorded writes could not be played on the target (each stated above)\n", s.Unplayable)
	}
	if s.NoOps > 0 {
		fmt.Fprintf(cfg.Log, "reenact: %d recorded updates changed nothing a client writes (not played)\n", s.NoOps)
	}
	if cfg.PrintRVs {
		for _, rv := range s.RVs {
			fmt.Fprintln(cfg.Log, printer.Escape(fmt.Sprintf("reenact: resourceVersion %s -> %s (%s %s/%s)", rv.Recorded, rv.Reenacted, rv.Resource, rv.Namespace, rv.Name)))
		}
	}
}
