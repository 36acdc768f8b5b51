package watch

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Limits of what an ownerTree holds for objects not (yet) known to be in a watched tree.
const (
	// maxHeldPerObject is the lines held for one object (or the Events regarding it) whose owner
	// was not seen yet; beyond it the oldest go.
	maxHeldPerObject = 32
	// maxHeldObjects is the objects with held lines; beyond it the longest held go.
	maxHeldObjects = 4096
	// maxGone is the deleted objects remembered for their late children and Events.
	maxGone = 4096
	// maxChainDepth bounds an owner chain (ownerReferences may form a cycle).
	maxChainDepth = 16
)

// ownerTree is the owner index behind --owned and --events: every object seen (uid → kind,
// name and owners), whether its owner chain reaches a watched root, and the lines of objects
// whose chain may reach one once an owner arrives. Each watch stream is in order, but an owner
// and what it owns come on different streams: a pod can arrive before its new ReplicaSet, an
// Event before the object it regards. Their lines are held, not dropped, and released right
// after the line that completes the chain.
//
// It is not safe for concurrent use.
type ownerTree struct {
	// kinds are the kinds of the tree (roots and owned): only an owner of one of them can lead
	// to a root, so other objects are dropped at once instead of held.
	kinds    map[schema.GroupKind]bool
	nodes    map[types.UID]*ownerNode
	keys     map[string]types.UID                 // resource/namespace/name → uid (tombstones without an object)
	children map[types.UID]map[types.UID]struct{} // owner → the objects naming it
	held     map[types.UID][]Event                // by the object's uid; KubeEvents by the regarded uid
	heldFIFO []types.UID
	gone     []types.UID
	// dropped counts held lines given up at the limits.
	dropped int
}

type ownerNode struct {
	self   Owner
	key    string
	ns     string     // "" for a cluster-scoped object
	owners []ownerRef // the controller first
	root   bool
	gone   bool
}

type ownerRef struct {
	uid types.UID
	gk  schema.GroupKind
}

func newOwnerTree(kinds []schema.GroupKind) *ownerTree {
	t := &ownerTree{kinds: map[schema.GroupKind]bool{}, nodes: map[types.UID]*ownerNode{}, keys: map[string]types.UID{},
		children: map[types.UID]map[types.UID]struct{}{}, held: map[types.UID][]Event{}}
	for _, k := range kinds {
		t.kinds[k] = true
	}
	return t
}

// observe takes an object event of a watched (root) or owned resource and returns the lines to
// emit: ev with its owner chain when it is in a watched tree (roots always are), then the held
// lines its arrival completes. A line of an object that cannot reach a root is dropped.
func (t *ownerTree) observe(ev Event, root bool) []Event {
	key := ev.ObjectID()
	uid := types.UID("")
	if ev.Obj.Object != nil {
		uid = ev.Obj.Object.GetUID()
	}
	if uid == "" {
		uid = t.keys[key] // a tombstone that kept only its key
	}
	if uid == "" {
		if root {
			return []Event{ev}
		}
		return nil
	}
	n := t.nodes[uid]
	if n == nil {
		n = &ownerNode{self: Owner{Kind: ev.Resource.Kind, Name: ev.Name, UID: string(uid)}, key: key, ns: ev.Namespace}
		t.nodes[uid] = n
		t.keys[key] = uid
	}
	n.root = n.root || root
	if ev.Obj.Object != nil && ev.Obj.Object.GetUID() != "" {
		t.setOwners(uid, n, ev.Obj.Object)
	}
	if ev.Type == Deleted && !n.gone {
		n.gone = true
		t.gone = append(t.gone, uid)
		t.forgetGone()
	}
	chain, ok := t.chain(uid, 0)
	if !ok {
		if !root && t.mayReachRoot(n, 0) {
			t.hold(uid, ev)
		} else {
			t.forget(uid)
		}
		return nil
	}
	ev.Obj.Owners = chain
	return append([]Event{ev}, t.release(uid)...)
}

// observeKube takes a KubeEvent line: emitted with the regarded object's chain when that object
// is in a watched tree, held while it may still turn out to be, dropped otherwise.
func (t *ownerTree) observeKube(ev Event) []Event {
	r := ev.Kube.Regarding
	uid := types.UID(r.UID)
	if uid == "" {
		return nil
	}
	if chain, ok := t.chain(uid, 0); ok {
		ev.Obj.Owners = chain
		return []Event{ev}
	}
	gv, _ := schema.ParseGroupVersion(r.APIVersion)
	if n := t.nodes[uid]; (n != nil && t.mayReachRoot(n, 0)) || (n == nil && t.kinds[schema.GroupKind{Group: gv.Group, Kind: r.Kind}]) {
		t.hold(uid, ev)
	}
	return nil
}

// setOwners records obj's ownerReferences, the controller first.
func (t *ownerTree) setOwners(uid types.UID, n *ownerNode, obj *unstructured.Unstructured) {
	for _, o := range n.owners {
		delete(t.children[o.uid], uid)
	}
	n.owners = n.owners[:0]
	refs := obj.GetOwnerReferences()
	for pass := range 2 {
		for _, r := range refs {
			isController := r.Controller != nil && *r.Controller
			if isController != (pass == 0) {
				continue
			}
			gv, _ := schema.ParseGroupVersion(r.APIVersion)
			n.owners = append(n.owners, ownerRef{uid: r.UID, gk: schema.GroupKind{Group: gv.Group, Kind: r.Kind}})
			if t.children[r.UID] == nil {
				t.children[r.UID] = map[types.UID]struct{}{}
			}
			t.children[r.UID][uid] = struct{}{}
		}
	}
}

// chain returns the owners from a watched root down to uid's own owner, and whether uid is in
// a watched tree at all (a root is: with the chain of a root that owns it, else an empty one).
func (t *ownerTree) chain(uid types.UID, depth int) ([]Owner, bool) {
	n := t.nodes[uid]
	if n == nil || depth > maxChainDepth {
		return nil, false
	}
	for _, o := range n.owners {
		if on := t.nodes[o.uid]; on == nil || !ownsByGC(on, n) {
			continue
		}
		if c, ok := t.chain(o.uid, depth+1); ok {
			return append(c, t.nodes[o.uid].self), true
		}
	}
	// A root is in the tree whatever owns it; one owned by another root (watch
	// deploy,rs,pods --owned: a ReplicaSet of a watched Deployment) gets that chain above.
	return nil, n.root
}

// mayReachRoot reports whether an owner of n not seen yet could still lead to a root: it is of
// a kind of the tree, or it was seen and may reach one itself.
func (t *ownerTree) mayReachRoot(n *ownerNode, depth int) bool {
	if depth > maxChainDepth {
		return false
	}
	for _, o := range n.owners {
		if on := t.nodes[o.uid]; on != nil {
			if !ownsByGC(on, n) {
				continue
			}
			if on.root || t.mayReachRoot(on, depth+1) {
				return true
			}
			continue
		}
		if t.kinds[o.gk] {
			return true
		}
	}
	return false
}

// ownsByGC reports whether the garbage collector takes owner as an owner of n: a cluster-scoped
// owner owns objects of any scope; a namespaced one only objects of its own namespace (a
// cluster-scoped object naming it has an unresolvable ownerReference, a namespaced object of
// another namespace one treated as absent).
func ownsByGC(owner, n *ownerNode) bool {
	return owner.ns == "" || owner.ns == n.ns
}

// hold keeps a line until the chain of its object completes.
func (t *ownerTree) hold(uid types.UID, ev Event) {
	lines, ok := t.held[uid]
	if !ok {
		t.heldFIFO = append(t.heldFIFO, uid)
	}
	if len(lines) >= maxHeldPerObject {
		lines = lines[1:]
		t.dropped++
	}
	t.held[uid] = append(lines, ev)
	for len(t.held) > maxHeldObjects && len(t.heldFIFO) > 0 {
		oldest := t.heldFIFO[0]
		t.heldFIFO = t.heldFIFO[1:]
		t.dropped += len(t.held[oldest])
		delete(t.held, oldest)
	}
}

// release returns the held lines that uid's arrival put in a watched tree: its own and the
// Events about it, then those of the objects it owns, recursively.
func (t *ownerTree) release(uid types.UID) []Event {
	var out []Event
	queue := []types.UID{uid}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		chain, ok := t.chain(u, 0)
		if !ok {
			continue
		}
		if lines, held := t.held[u]; held {
			delete(t.held, u)
			for _, ev := range lines {
				ev.Obj.Owners = chain // a KubeEvent's too: the chain of the object it regards
				out = append(out, ev)
			}
		}
		for c := range t.children[u] {
			queue = append(queue, c)
		}
	}
	return out
}

// forget drops an object that cannot reach a root, with its held lines.
func (t *ownerTree) forget(uid types.UID) {
	n := t.nodes[uid]
	if n == nil {
		return
	}
	if len(t.children[uid]) > 0 && !n.gone {
		return // what it owns still names it
	}
	for _, o := range n.owners {
		delete(t.children[o.uid], uid)
		if len(t.children[o.uid]) == 0 {
			delete(t.children, o.uid)
		}
	}
	delete(t.nodes, uid)
	if t.keys[n.key] == uid {
		delete(t.keys, n.key)
	}
	if lines, ok := t.held[uid]; ok {
		t.dropped += len(lines)
		delete(t.held, uid)
	}
}

// forgetGone drops the oldest deleted objects beyond maxGone: their late children and Events
// are then not shown.
func (t *ownerTree) forgetGone() {
	for len(t.gone) > maxGone {
		uid := t.gone[0]
		t.gone = t.gone[1:]
		if n := t.nodes[uid]; n != nil {
			n.root = false
			delete(t.children, uid)
			n.gone = true
			t.forget(uid)
		}
	}
}
