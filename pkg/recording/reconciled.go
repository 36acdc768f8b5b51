package recording

import (
	"fmt"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// reconciledRecord is a simulated worker's reconcile of one key.
type reconciledRecord struct {
	eventHead
	Key      string       `json:"key"`
	WaitMs   float64      `json:"waitMs"`
	WorkMs   float64      `json:"workMs"`
	Requeues int          `json:"requeues"`
	Error    bool         `json:"error"`
	Queue    *queueRecord `json:"queue"`
	// TriggerCount: the object events that coalesced into this reconcile (exact); Triggers:
	// them, capped at watch.MaxTriggers (the oldest two and the newest kept).
	TriggerCount int             `json:"triggerCount"`
	Triggers     []triggerRecord `json:"triggers,omitempty"`
	// Requeue: the key came back because its previous reconcile failed; RequeueReason says so.
	Requeue       bool   `json:"requeue"`
	RequeueReason string `json:"requeueReason,omitempty"`
}

// triggerRecord is an object event that put a key in the workqueue.
type triggerRecord struct {
	Type            watch.Type  `json:"type"`
	Delta           watch.Delta `json:"delta"`
	ResourceVersion string      `json:"resourceVersion"`
	Managers        []string    `json:"managers,omitempty"`
	Attribution     string      `json:"attribution,omitempty"`
	Time            string      `json:"time"`
	// Resource and Key: the owned object whose event enqueued its owner (--owned).
	Resource string `json:"resource,omitempty"`
	Key      string `json:"key,omitempty"`
}

func triggersOf(ts []watch.Trigger) []triggerRecord {
	if len(ts) == 0 {
		return nil
	}
	out := make([]triggerRecord, len(ts))
	for i, t := range ts {
		out[i] = triggerRecord{Type: t.Type, Delta: t.Delta, ResourceVersion: t.ResourceVersion, Managers: t.Managers, Attribution: t.Attribution, Time: formatTime(t.Time),
			Resource: t.Resource, Key: t.Key}
	}
	return out
}

// triggersFrom is the inverse of triggersOf.
func triggersFrom(rs []triggerRecord) ([]watch.Trigger, error) {
	var out []watch.Trigger
	for _, t := range rs {
		at, err := time.Parse(time.RFC3339Nano, t.Time)
		if err != nil {
			return nil, fmt.Errorf("trigger time: %w", err)
		}
		out = append(out, watch.Trigger{Type: t.Type, Delta: t.Delta, ResourceVersion: t.ResourceVersion, Managers: t.Managers, Attribution: t.Attribution, Time: at,
			Resource: t.Resource, Key: t.Key})
	}
	return out, nil
}

func reconciledOf(ev *watch.Event) reconciledRecord {
	return reconciledRecord{
		eventHead: headOf(ev),
		Key:       ev.Key, WaitMs: msFloat(ev.Queued.Wait), WorkMs: msFloat(ev.Queued.Work), Requeues: ev.Queued.Requeues, Error: ev.Queued.Failed,
		Queue:        queueOf(ev.Obj.Queue),
		TriggerCount: ev.Queued.TriggerCount, Triggers: triggersOf(ev.Queued.Triggers),
		Requeue: ev.Queued.Requeue, RequeueReason: ev.Queued.RequeueReason,
	}
}

// event is the inverse of reconciledOf.
func (r *reconciledRecord) event(ev *watch.Event) error {
	ev.Key, ev.Queued.Wait, ev.Queued.Work, ev.Queued.Requeues, ev.Queued.Failed = r.Key, fromMs(r.WaitMs), fromMs(r.WorkMs), r.Requeues, r.Error
	ev.Queued.TriggerCount, ev.Queued.Requeue, ev.Queued.RequeueReason = r.TriggerCount, r.Requeue, r.RequeueReason
	var err error
	if ev.Queued.Triggers, err = triggersFrom(r.Triggers); err != nil {
		return err
	}
	ev.Obj.Queue = r.Queue.figures()
	return nil
}
