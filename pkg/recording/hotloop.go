package recording

import (
	"encoding/json"
	"math"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// HotLoop is the type of a hot-loop report (watch.HotLoop): one object rewritten too often, or
// two managers taking turns at it (docs/json.md). The analysis step makes it.
const HotLoop = watch.HotLoop

// HotLoopEnded is the type of the line that closes a HotLoop (watch.HotLoopEnded): a whole
// window passed without an update to the object, or it was deleted (docs/json.md).
const HotLoopEnded = watch.HotLoopEnded

// hotLoopRecord is a HotLoop line in the JSON contract.
type hotLoopRecord struct {
	eventHead
	Namespace     string       `json:"namespace"`
	Name          string       `json:"name"`
	Key           string       `json:"key"`
	Reason        string       `json:"reason"`
	Managers      managerNames `json:"managers"`
	Updates       int          `json:"updates"`
	WindowSeconds float64      `json:"windowSeconds"`
	Fields        []string     `json:"fields"`
	// Loop and Suggestion: the diagnosis (diff.LoopFight, LoopSelf, LoopBusy) and its usual fix.
	Loop       string `json:"loop,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// orEmpty keeps a JSON list a list ([]) when it has no element.
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func hotLoopOf(ev *watch.Event) hotLoopRecord {
	h := ev.HotLoopInfo()
	return hotLoopRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, Key: ev.Key, Reason: h.Reason,
		Managers: orEmpty(h.Managers), Updates: h.Updates, WindowSeconds: h.Window.Seconds(), Fields: orEmpty(h.Fields),
		Loop: h.Loop, Suggestion: h.Suggestion,
	}
}

// hotLoopEndedRecord is a HotLoopEnded line in the JSON contract.
type hotLoopEndedRecord struct {
	eventHead
	Namespace       string       `json:"namespace"`
	Name            string       `json:"name"`
	Key             string       `json:"key"`
	Loop            string       `json:"loop"`
	Updates         int          `json:"updates"`
	DurationSeconds float64      `json:"durationSeconds"`
	Managers        managerNames `json:"managers"`
	ObjectDeleted   bool         `json:"objectDeleted"`
}

func hotLoopEndedOf(ev *watch.Event) hotLoopEndedRecord {
	h := ev.HotLoopInfo()
	return hotLoopEndedRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, Key: ev.Key, Loop: h.Loop,
		Updates: h.Updates, DurationSeconds: h.Duration.Seconds(), Managers: orEmpty(h.Managers), ObjectDeleted: h.Deleted,
	}
}

// event is the inverse of hotLoopOf.
func (r *hotLoopRecord) event(ev *watch.Event) error {
	ev.Namespace, ev.Name, ev.Key = r.Namespace, r.Name, r.Key
	ev.HotLoop = &watch.HotLoopInfo{Reason: r.Reason, Loop: r.Loop, Suggestion: r.Suggestion, Managers: r.Managers, Fields: r.Fields,
		Updates: r.Updates, Window: time.Duration(math.Round(r.WindowSeconds * float64(time.Second)))}
	return nil
}

// event is the inverse of hotLoopEndedOf.
func (r *hotLoopEndedRecord) event(ev *watch.Event) error {
	ev.Namespace, ev.Name, ev.Key = r.Namespace, r.Name, r.Key
	ev.HotLoop = &watch.HotLoopInfo{Loop: r.Loop, Managers: r.Managers, Updates: r.Updates,
		Duration: time.Duration(math.Round(r.DurationSeconds * float64(time.Second))), Deleted: r.ObjectDeleted}
	return nil
}

// managerNames are a hot loop's managers: a list of names (on Updated lines, "managers" are
// objects).
type managerNames []string

// UnmarshalJSON reads a list of strings; null is none.
func (m *managerNames) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*m = nil
		return nil
	}
	if err := json.Unmarshal(b, (*[]string)(m)); err != nil {
		return &fieldError{field: "managers", want: "an array of strings", onLine: true}
	}
	return nil
}
