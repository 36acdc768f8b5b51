package diff

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// The rules Attribute names in Attribution.Rule.
const (
	// RuleEntry: the author's managedFields entry moved (new, a new time, or new fields).
	RuleEntry = "entry"
	// RuleOwnership: no entry moved; the managers named own every changed field.
	RuleOwnership = "ownership"
	// RuleBinding: a pod bound to a node through pods/binding (what schedulers use), which
	// records no manager.
	RuleBinding = "binding"
	// RuleDelete: a DELETE request set metadata.deletionTimestamp (graceful deletion); deletes
	// record no manager.
	RuleDelete = "delete"
	// RuleUnknown: nobody can be named; Why says why.
	RuleUnknown = "unknown"
	// RuleReconcile: no managedFields entry tells, but a controller's log shows its reconcile of
	// the object running when the update landed (internal/ctrllog); Reconcile names it.
	RuleReconcile = "reconcile"
)

// ReconcileRef names the reconcile, read from a controller's log, that an update is
// attributed to (RuleReconcile).
type ReconcileRef struct {
	Controller string `json:"controller"`
	// ReconcileID is controller-runtime's per-reconcile id; empty for a log without one (klog).
	ReconcileID string `json:"reconcileID,omitempty"`
	// Kind (lower-cased, as the log names it), Namespace and Name are the reconciled object when
	// it is not the written one: the owner whose reconcile deleted it. Empty otherwise.
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// Attribution says who made an update, and how that was found.
type Attribution struct {
	Managers []Manager `json:"managers"`
	// Rule is RuleEntry, RuleOwnership, RuleBinding, RuleDelete, RuleReconcile or RuleUnknown.
	// A delete whose controller a log names keeps RuleDelete, with Managers and Reconcile set.
	Rule string `json:"attribution"`
	// Why explains the rules that name nobody (binding, delete, unknown, a no-op).
	Why string `json:"attributionReason"`
	// NoOp marks an update that changed nothing but metadata.resourceVersion and managedFields.
	NoOp bool `json:"noop"`
	// Reconcile is the reconcile the update is attributed to (RuleReconcile); its controller is
	// also Managers' one entry (operation "Reconcile").
	Reconcile *ReconcileRef `json:"reconcile"`
}

// Explainable reports whether a's update names nobody that a controller's log could name:
// managedFields told nothing (RuleUnknown, a no-op write included).
func (a *Attribution) Explainable() bool {
	return a != nil && a.Rule == RuleUnknown && len(a.Managers) == 0
}

// serverFields are set by the API server itself, not by the client whose request caused them.
var serverFields = map[string]bool{
	"metadata.generation":                 true,
	"metadata.deletionTimestamp":          true,
	"metadata.deletionGracePeriodSeconds": true,
}

// Attribute names the managers that made the update from old to cur. First by entry
// (ChangedManagers): the API server stamps its author's entry with the time, to the second, of
// the write. When no entry moved (a second write by the same manager within that second, to
// fields it already owned), by field ownership: an Update or Apply leaves its author owning
// every field it set, so the author is among the managers that own all the changed fields (in
// cur; a removed field in old). When several own them all, all are named: one of them made it.
// changes is Compute(old, cur), or nil to have it computed when needed.
func Attribute(old, cur map[string]any, changes []Change) Attribution {
	if ms := ChangedManagers(old, cur); len(ms) > 0 {
		return Attribution{Managers: ms, Rule: RuleEntry}
	}
	if changes == nil {
		changes = Compute(old, cur)
	}
	var relevant []Change
	server := false
	for _, c := range changes {
		if serverFields[c.Path] {
			server = true
			continue
		}
		relevant = append(relevant, c)
	}
	if len(relevant) == 0 {
		if server {
			return Attribution{Rule: RuleDelete, Why: "a DELETE request: the API server set metadata.deletionTimestamp; deletes record no manager"}
		}
		return Attribution{Rule: RuleUnknown, NoOp: true, Why: "no-op: nothing but metadata.resourceVersion and managedFields changed"}
	}
	newEntries, order := managedFields(cur)
	if node, ok := bound(relevant); ok && len(ownersOf(newEntries, order, node)) == 0 {
		return Attribution{Rule: RuleBinding, Why: "bound to a node through pods/binding (a scheduler), which records no manager"}
	}
	if len(newEntries) == 0 {
		return Attribution{Rule: RuleUnknown, Why: "the object has no managedFields (dropped, or not tracked for this resource)"}
	}
	oldEntries, oldOrder := managedFields(old)
	var common []entryID // owners of every relevant change so far
	for i, c := range relevant {
		var owners []entryID
		if c.HasNew {
			owners = ownersOf(newEntries, order, c)
		} else {
			owners = ownersOf(oldEntries, oldOrder, c)
		}
		if len(owners) == 0 {
			return Attribution{Rule: RuleUnknown, Why: "no manager owns " + c.Path}
		}
		if i == 0 {
			common = owners
			continue
		}
		common = slices.DeleteFunc(common, func(id entryID) bool { return !slices.Contains(owners, id) })
		if len(common) == 0 {
			return Attribution{Rule: RuleUnknown, Why: "the changed fields have different owners (" + relevant[0].Path + ", " + c.Path + ")"}
		}
	}
	a := Attribution{Rule: RuleOwnership}
	seen := map[Manager]bool{}
	for _, id := range common {
		m := Manager{Manager: id.manager, Operation: id.operation, Subresource: id.subresource}
		if !seen[m] {
			seen[m] = true
			a.Managers = append(a.Managers, m)
		}
	}
	return a
}

// bound reports whether changes are a pod binding, and returns its spec.nodeName change: the
// node set where there was none, with at most the PodScheduled condition the binding sets and
// labels added (from v1.37 the binding also copies the node's topology labels,
// topology.kubernetes.io/zone and region, to the pod).
func bound(changes []Change) (Change, bool) {
	var node Change
	for _, c := range changes {
		switch {
		case c.Path == "spec.nodeName" && !c.HasOld:
			node = c
		case strings.HasPrefix(c.Path, "status.conditions[type=PodScheduled]"),
			c.Path == "status.conditions" && onlyPodScheduled(c.New),
			labelAdded(c):
		default:
			return Change{}, false
		}
	}
	return node, node.Path != ""
}

// labelAdded reports whether c adds a label (or the first labels) and changes no other.
func labelAdded(c Change) bool {
	if c.HasOld || !c.HasNew {
		return false
	}
	return c.Path == "metadata.labels" || strings.HasPrefix(c.Path, "metadata.labels.") || strings.HasPrefix(c.Path, "metadata.labels[")
}

func onlyPodScheduled(v any) bool {
	l, _ := v.([]any)
	for _, e := range l {
		if m, _ := e.(map[string]any); m["type"] != "PodScheduled" {
			return false
		}
	}
	return len(l) > 0
}

// ownersOf returns the entries whose fieldsV1 own the changed field c, in order.
func ownersOf(entries map[entryID]entry, order []entryID, c Change) []entryID {
	var out []entryID
	for _, id := range order {
		tree, _ := entries[id].fieldsV1.(map[string]any)
		if owns(tree, c) {
			out = append(out, id)
		}
	}
	return out
}

// owns walks c's path down a fieldsV1 tree: map keys are "f:<key>", list elements "k:<json of
// the key fields>", "i:<index>" or "v:<json of the value>". A node with no children but "." is
// owned whole (an atomic list or map, a scalar): what lies below it is owned too.
func owns(tree map[string]any, c Change) bool {
	node := tree
	if len(c.segs) == 0 {
		return false
	}
	for i, s := range c.segs {
		if node == nil {
			return false
		}
		var child any
		var ok bool
		switch s.kind {
		case 'k':
			child, ok = node["f:"+s.key]
		case 'e':
			child, ok = keyedChild(node, s.key, s.value)
		case 'i':
			child, ok = node["i:"+strconv.Itoa(s.index)]
			if !ok && i == len(c.segs)-1 {
				// A set of scalars (finalizers): its elements are named by value.
				v := c.New
				if !c.HasNew {
					v = c.Old
				}
				if b, err := json.Marshal(v); err == nil {
					child, ok = node["v:"+string(b)]
				}
			}
		}
		if !ok {
			return false
		}
		node, _ = child.(map[string]any)
		if node == nil || leaf(node) {
			return true
		}
	}
	return true
}

func keyedChild(node map[string]any, key string, value any) (any, bool) {
	for k, child := range node {
		rest, ok := strings.CutPrefix(k, "k:")
		if !ok {
			continue
		}
		var fields map[string]any
		if json.Unmarshal([]byte(rest), &fields) != nil {
			continue
		}
		if v, ok := fields[key]; ok && equal(v, value) {
			return child, true
		}
	}
	return nil, false
}

// leaf reports whether a fieldsV1 node has no children but the "." marker.
func leaf(node map[string]any) bool {
	for k := range node {
		if k != "." {
			return false
		}
	}
	return true
}
