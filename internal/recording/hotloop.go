package recording

import (
	"encoding/json"
	"fmt"
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
	h := ev.HotLoopInfo()
	return hotLoopEndedRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, Key: ev.Key, Loop: h.Loop,
		Updates: h.Updates, DurationSeconds: h.Duration.Seconds(), Managers: orEmpty(h.Managers), ObjectDeleted: h.Deleted,
	}
}

// hotLoopFrom decodes a HotLoop or HotLoopEnded line.
func hotLoopFrom(w *wireLine, ev *watch.Event) error {
	var managers []string
	if len(w.Managers) > 0 && string(w.Managers) != "null" {
		if err := json.Unmarshal(w.Managers, &managers); err != nil {
			return fmt.Errorf(`field "managers": want an array of strings on a %s line`, ev.Type)
		}
	}
	ev.Namespace, ev.Name, ev.Key = w.Namespace, w.Name, w.Key
	if ev.Type == watch.HotLoopEnded {
		ev.HotLoop = &watch.HotLoopInfo{Loop: w.Loop, Managers: managers, Updates: w.Updates,
			Duration: time.Duration(math.Round(deref(w.DurationSeconds) * float64(time.Second))), Deleted: w.ObjectDeleted}
		return nil
	}
	ev.HotLoop = &watch.HotLoopInfo{Reason: w.Reason, Loop: w.Loop, Suggestion: w.Suggestion, Managers: managers, Fields: w.Fields,
		Updates: w.Updates, Window: time.Duration(math.Round(w.WindowSeconds * float64(time.Second)))}
	return nil
}
