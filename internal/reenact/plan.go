package reenact

import (
	"encoding/json"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Op is what a step does to the target.
type Op string

// The operations of a Step.
const (
	OpCreate Op = "create"
	OpUpdate Op = "update"
	OpDelete Op = "delete"
)

// DefaultManager is the field manager of a write whose recorded author cannot be named (no
// managedFields, or an update nobody's entry explains).
const DefaultManager = "kubectl-informer-reenact"

// Step is one recorded write to play: the object as recorded after it (before it, for a delete),
// who made it and through which subresource.
type Step struct {
	Op       Op
	Time     time.Time
	Resource discovery.Resource
	// Namespace and Name are the recorded object's.
	Namespace, Name string
	// Object is the recorded object after the write; Old before it (updates only).
	Object, Old *unstructured.Unstructured
	// Manager is the recorded writer's field manager; Subresource is "status" when the
	// recorded write went through the status subresource.
	Manager     string
	Subresource string
	// Named: Manager comes from the recording (not DefaultManager).
	Named bool
	// RecordedRV is the resourceVersion the recorded write made (the object's).
	RecordedRV string
}

// Plan is a recording turned into writes: the objects as they stood at its start, then every
// recorded create, update and delete in order.
type Plan struct {
	// Initial are the objects of the initial lists, to be created first.
	Initial []Step
	// Steps are the recorded writes after the initial lists, in the recording's order.
	Steps []Step
	// Start is when the initial lists were in: the origin of the recorded pace.
	Start time.Time
	// Resources are the recording's resources that hold objects, in order of appearance.
	Resources []discovery.Resource
	// Namespaces are the recorded namespaces of namespaced objects, sorted.
	Namespaces []string
	// NoOps counts recorded updates that changed nothing a client can write (resourceVersion
	// and managedFields only): they cannot be played.
	NoOps int
}

// NewPlan reads the writes out of a recording's events. An Added line of an initial list (or the
// first list of a resource) is an initial object; a later Added line a create; an Updated line
// that moved the resourceVersion an update; a Deleted line a delete. Resyncs and a relist's
// unchanged deliveries are not writes.
func NewPlan(events []watch.Event) *Plan {
	p := &Plan{}
	seenRes := map[string]bool{}
	seenNS := map[string]bool{}
	synced := false
	for i := range events {
		ev := &events[i]
		if ev.Type == watch.Synced && !synced {
			p.Start, synced = ev.Time, true
			continue
		}
		if !ev.Type.IsObject() || ev.Obj.Object == nil {
			continue
		}
		if k := ev.Resource.GVR().String(); !seenRes[k] {
			seenRes[k] = true
			p.Resources = append(p.Resources, ev.Resource)
		}
		if ev.Namespace != "" && !seenNS[ev.Namespace] {
			seenNS[ev.Namespace] = true
			p.Namespaces = append(p.Namespaces, ev.Namespace)
		}
		st := Step{Time: ev.Time, Resource: ev.Resource, Namespace: ev.Namespace, Name: ev.Name, Object: ev.Obj.Object, RecordedRV: ev.ResourceVersion}
		switch {
		case ev.Type == watch.Added && ev.Obj.InitialList:
			st.Op = OpCreate
			st.Manager, st.Named = creator(ev.Obj.Object)
			p.Initial = append(p.Initial, st)
			if ev.Time.After(p.Start) && !synced {
				p.Start = ev.Time
			}
			continue
		case ev.Type == watch.Added:
			st.Op = OpCreate
			st.Manager, st.Named = creator(ev.Obj.Object)
		case ev.Type == watch.Updated:
			if ev.Obj.Delta == watch.DeltaSync || ev.ResourceVersion == ev.Obj.OldResourceVersion || ev.Obj.OldObject == nil {
				continue
			}
			st.Op, st.Old = OpUpdate, ev.Obj.OldObject
			a := diff.Attribute(ev.Obj.OldObject.Object, ev.Obj.Object.Object, nil)
			if a.NoOp {
				p.NoOps++
				continue
			}
			if len(a.Managers) > 0 {
				st.Manager, st.Subresource, st.Named = a.Managers[0].Manager, a.Managers[0].Subresource, true
			} else {
				st.Manager = DefaultManager
			}
		case ev.Type == watch.Deleted:
			st.Op = OpDelete
		}
		p.Steps = append(p.Steps, st)
	}
	slices.Sort(p.Namespaces)
	if p.Start.IsZero() && len(p.Steps) > 0 {
		p.Start = p.Steps[0].Time
	}
	return p
}

// creator names the manager that created obj: its oldest entry on the main resource (a create
// has no subresource), else DefaultManager.
func creator(obj *unstructured.Unstructured) (string, bool) {
	best, bestTime := "", ""
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "" || e.Manager == "" {
			continue
		}
		t := ""
		if e.Time != nil {
			t = e.Time.UTC().Format(time.RFC3339)
		}
		if best == "" || t < bestTime {
			best, bestTime = e.Manager, t
		}
	}
	if best == "" {
		return DefaultManager, false
	}
	return best, true
}

// statusManager names the manager that last wrote obj's status through the status subresource;
// "" when none did.
func statusManager(obj *unstructured.Unstructured) string {
	best, bestTime := "", ""
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "status" {
			continue
		}
		t := ""
		if e.Time != nil {
			t = e.Time.UTC().Format(time.RFC3339)
		}
		if best == "" || t >= bestTime {
			best, bestTime = e.Manager, t
		}
	}
	return best
}

// serverMetadata are the metadata fields the API server sets; a reenacted object gets the
// target's own.
var serverMetadata = []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// writable returns a copy of obj as a client may write it to the target: the server's metadata
// removed, the namespace mapped, the reenactment's label added, and ownerReferences pointing at
// the reenacted owners (uids maps recorded uids to the target's; an owner not reenacted is
// dropped, or the garbage collector would delete the object).
func writable(obj *unstructured.Unstructured, namespace, label, name string, uids map[string]string) *unstructured.Unstructured {
	out := obj.DeepCopy()
	md, _ := out.Object["metadata"].(map[string]any)
	for _, k := range serverMetadata {
		delete(md, k)
	}
	if namespace != "" {
		out.SetNamespace(namespace)
	}
	if out.GetAPIVersion() == "v1" && out.GetKind() == "Service" {
		serviceAllocations(out.Object)
	}
	labels := out.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[label] = name
	out.SetLabels(labels)
	owners := out.GetOwnerReferences()
	kept := owners[:0]
	for _, o := range owners {
		if uid, ok := uids[string(o.UID)]; ok {
			o.UID = types.UID(uid)
			kept = append(kept, o)
		}
	}
	if len(owners) > 0 {
		if len(kept) == 0 {
			unstructured.RemoveNestedField(out.Object, "metadata", "ownerReferences")
		} else {
			out.SetOwnerReferences(kept)
		}
	}
	return out
}

// serviceAllocations removes what the source cluster allocated to a Service (cluster IPs from its
// service CIDR, node ports, the health-check node port): the target allocates its own. A
// headless Service keeps clusterIP None.
func serviceAllocations(obj map[string]any) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if ip, _ := spec["clusterIP"].(string); ip != "None" {
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
	}
	delete(spec, "healthCheckNodePort")
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		if pm, ok := p.(map[string]any); ok {
			delete(pm, "nodePort")
		}
	}
}

// mergePatch is the JSON merge patch (RFC 7386) that turns old into cur: changed and added keys
// with their new values, removed keys as null, lists whole.
func mergePatch(old, cur map[string]any) map[string]any {
	patch := map[string]any{}
	for k, v := range cur {
		ov, had := old[k]
		if !had {
			patch[k] = v
			continue
		}
		om, oldIsMap := ov.(map[string]any)
		nm, newIsMap := v.(map[string]any)
		if oldIsMap && newIsMap {
			if sub := mergePatch(om, nm); len(sub) > 0 {
				patch[k] = sub
			}
			continue
		}
		if !jsonEqual(ov, v) {
			patch[k] = v
		}
	}
	for k := range old {
		if _, ok := cur[k]; !ok {
			patch[k] = nil
		}
	}
	return patch
}

// jsonEqual compares two JSON values as JSON (numbers of any Go type alike).
func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// applied reports whether obj already holds every value of patch (a merge patch): writing it
// would change nothing.
func applied(obj map[string]any, patch map[string]any) bool {
	for k, v := range patch {
		cur, has := obj[k]
		if v == nil {
			if has {
				return false
			}
			continue
		}
		pm, isMap := v.(map[string]any)
		cm, curIsMap := cur.(map[string]any)
		if isMap && curIsMap {
			if !applied(cm, pm) {
				return false
			}
			continue
		}
		if !has || !jsonEqual(cur, v) {
			return false
		}
	}
	return true
}

// split separates a patch into what the main resource takes and what the status subresource
// takes, for a resource that has one.
func split(patch map[string]any) (main, status map[string]any) {
	main = map[string]any{}
	for k, v := range patch {
		if k == "status" {
			status = map[string]any{"status": v}
			continue
		}
		main[k] = v
	}
	return main, status
}
