package diff

// Manager names a field manager: one metadata.managedFields entry, less its fields.
type Manager struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource"`
}

// String is `kubectl-edit (Update)`, `kubelet (Update status)`.
func (m Manager) String() string {
	op := m.Operation
	if m.Subresource != "" {
		op += " " + m.Subresource
	}
	return m.Manager + " (" + op + ")"
}

// entryID identifies a managedFields entry: the API server keeps one per manager, operation,
// subresource and (for Update) apiVersion.
type entryID struct {
	manager, operation, subresource, apiVersion string
}

type entry struct {
	time     any
	fieldsV1 any
}

func managedFields(obj map[string]any) (map[entryID]entry, []entryID) {
	md, _ := obj["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	byID := make(map[entryID]entry, len(list))
	var order []entryID
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		id := entryID{str("manager"), str("operation"), str("subresource"), str("apiVersion")}
		if _, dup := byID[id]; !dup {
			order = append(order, id)
		}
		byID[id] = entry{time: m["time"], fieldsV1: m["fieldsV1"]}
	}
	return byID, order
}

// ChangedManagers returns the managers that made this update, in the new object's order,
// without duplicates: those whose managedFields entry is new, has a new time, or owns fields it
// did not own before. An entry that only lost fields (another manager took them over) does not
// count. The API server stamps an entry's time, to the second, whenever its manager's operation
// changes the object, so an update normally names exactly its author. It cannot tell two
// updates by one manager within the same second that touch fields it already owned: then the
// update names nobody.
func ChangedManagers(old, new map[string]any) []Manager {
	before, _ := managedFields(old)
	after, order := managedFields(new)
	var out []Manager
	seen := map[Manager]bool{}
	for _, id := range order {
		a := after[id]
		if b, ok := before[id]; ok && equal(a.time, b.time) && !gained(a.fieldsV1, b.fieldsV1) {
			continue
		}
		m := Manager{Manager: id.manager, Operation: id.operation, Subresource: id.subresource}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// gained reports whether the fieldsV1 tree now holds a field that before does not.
func gained(now, before any) bool {
	n, _ := now.(map[string]any)
	b, _ := before.(map[string]any)
	for k, v := range n {
		bv, ok := b[k]
		if !ok || gained(v, bv) {
			return true
		}
	}
	return false
}
