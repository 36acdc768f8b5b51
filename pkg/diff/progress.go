package diff

import (
	"reflect"
	"strings"
)

// Converging reports whether an update looks like a controller making progress rather than
// spinning: it changes at least one field that controllers move while they converge on the
// spec. Those are status.observedGeneration (catching up with metadata.generation), a replica
// count (spec.replicas or any status.*Replicas: a scale, a rollout's surge and drain),
// status.phase, a condition's status or reason or a condition coming or going (not only its
// timestamps or message), and a deletion under way (metadata.deletionTimestamp set, a finalizer
// removed). Timestamps, annotations, a status field nobody reads, a spec rewritten with other
// values: none of those is progress. changes is Compute(old, cur).
//
// A converging update that puts a field back to a value it had earlier is still a loop: the
// HotLoopDetector checks that (Update.Changes), not this function.
func Converging(changes []Change) bool {
	for _, c := range changes {
		if convergingPath(c) {
			return true
		}
	}
	return false
}

func convergingPath(c Change) bool {
	p := c.Path
	switch p {
	case "status.observedGeneration", "status.phase", "spec.replicas":
		return true
	case "metadata.deletionTimestamp":
		return c.HasNew && !c.HasOld
	}
	if strings.HasPrefix(p, "metadata.finalizers") {
		return c.HasOld && !c.HasNew // one removed
	}
	if rest, ok := strings.CutPrefix(p, "status."); ok && !strings.ContainsAny(rest, ".[") {
		return rest == "replicas" || strings.HasSuffix(rest, "Replicas")
	}
	if rest, ok := strings.CutPrefix(p, "status.conditions["); ok {
		_, field, _ := strings.Cut(rest, "]")
		// The whole condition (added or removed), or its status or reason.
		return field == "" || field == ".status" || field == ".reason"
	}
	return false
}

// reverts reports whether u puts a field that is not under status back to a value it had before
// one of the earlier updates (A→B, then B→A): values flipping back are a loop even when each
// write looks like progress.
func reverts(u Update, earlier []Update) bool {
	for _, c := range u.Changes {
		if strings.HasPrefix(c.Path, "status.") || c.Path == "status" || !c.HasNew {
			continue
		}
		for _, e := range earlier {
			for _, ec := range e.Changes {
				if ec.Path == c.Path && ec.HasOld && reflect.DeepEqual(ec.Old, c.New) {
					return true
				}
			}
		}
	}
	return false
}
