package recording

import (
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// HotLoop is the type of a hot-loop report: one object rewritten too often, or two managers
// taking turns at it (docs/json.md). pkg/watch has no such event; pkg/printer's HotLoops makes it.
const HotLoop watch.Type = "HotLoop"

// HotLoopEnded is the type of the line that closes a HotLoop: a whole window passed without an
// update to the object, or it was deleted (docs/json.md).
const HotLoopEnded watch.Type = "HotLoopEnded"

// hotLoopRecord is a HotLoop line in the JSON contract.
type hotLoopRecord struct {
	eventHead
	Namespace     string   `json:"namespace"`
	Name          string   `json:"name"`
	Key           string   `json:"key"`
	Reason        string   `json:"reason"`
	Managers      []string `json:"managers"`
	Updates       int      `json:"updates"`
	WindowSeconds float64  `json:"windowSeconds"`
	Fields        []string `json:"fields"`
	// Loop and Suggestion: the diagnosis (diff.LoopFight, LoopSelf, LoopBusy) and its usual fix.
	Loop       string `json:"loop,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

func hotLoopOf(ev *watch.Event) hotLoopRecord {
	managers, fields := hotLoopLists(ev)
	return hotLoopRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, Key: ev.Key, Reason: ev.Reason,
		Managers: managers, Updates: ev.Items, WindowSeconds: ev.Duration.Seconds(), Fields: fields,
		Loop: hotLoopString(ev, "loop"), Suggestion: hotLoopString(ev, "suggestion"),
	}
}

// hotLoopEndedRecord is a HotLoopEnded line in the JSON contract.
type hotLoopEndedRecord struct {
	eventHead
	Namespace       string   `json:"namespace"`
	Name            string   `json:"name"`
	Key             string   `json:"key"`
	Loop            string   `json:"loop"`
	Updates         int      `json:"updates"`
	DurationSeconds float64  `json:"durationSeconds"`
	Managers        []string `json:"managers"`
	ObjectDeleted   bool     `json:"objectDeleted"`
}

func hotLoopEndedOf(ev *watch.Event) hotLoopEndedRecord {
	managers, _ := hotLoopLists(ev)
	deleted := false
	if ev.Object != nil {
		deleted, _ = ev.Object.Object["deleted"].(bool)
	}
	return hotLoopEndedRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, Key: ev.Key, Loop: ev.Reason,
		Updates: ev.Items, DurationSeconds: ev.Duration.Seconds(), Managers: managers, ObjectDeleted: deleted,
	}
}

// hotLoopLists are a HotLoop event's managers and flipping fields, as HotLoops puts them in
// its object.
func hotLoopLists(ev *watch.Event) (managers, fields []string) {
	if ev.Object == nil {
		return []string{}, []string{}
	}
	return asStrings(ev.Object.Object["managers"]), asStrings(ev.Object.Object["fields"])
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func hotLoopString(ev *watch.Event, key string) string {
	if ev.Object == nil {
		return ""
	}
	s, _ := ev.Object.Object[key].(string)
	return s
}
