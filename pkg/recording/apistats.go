package recording

import (
	"math"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// apfRecord is API Priority and Fairness's classification (docs/json.md); on List, Watch,
// Throttled and ApiStats lines.
type apfRecord struct {
	FlowSchema       string `json:"flowSchema,omitempty"`
	PriorityLevel    string `json:"priorityLevel,omitempty"`
	FlowSchemaUID    string `json:"flowSchemaUID,omitempty"`
	PriorityLevelUID string `json:"priorityLevelUID,omitempty"`
	APFNote          string `json:"apfNote,omitempty"`
}

func apfRecordOf(a *apistats.APF) apfRecord {
	if a == nil {
		return apfRecord{}
	}
	return apfRecord{FlowSchema: a.FlowSchema, PriorityLevel: a.PriorityLevel, FlowSchemaUID: a.FlowSchemaUID, PriorityLevelUID: a.PriorityLevelUID, APFNote: a.Note}
}

func (r apfRecord) apf() *apistats.APF {
	if r == (apfRecord{}) {
		return nil
	}
	return &apistats.APF{FlowSchema: r.FlowSchema, PriorityLevel: r.PriorityLevel, FlowSchemaUID: r.FlowSchemaUID, PriorityLevelUID: r.PriorityLevelUID, Note: r.APFNote}
}

// throttledRecord is a Throttled line.
type throttledRecord struct {
	eventHead
	Reason            string   `json:"reason"`
	Verb              string   `json:"verb"`
	DelayMs           *float64 `json:"delayMs,omitempty"`
	RetryAfterSeconds *float64 `json:"retryAfterSeconds,omitempty"`
	apfRecord
}

func throttledOf(ev *watch.Event) throttledRecord {
	r := throttledRecord{eventHead: headOf(ev), Reason: ev.Lifecycle.Reason, Verb: ev.Lifecycle.Verb, apfRecord: apfRecordOf(ev.Stats.APF)}
	if ev.Lifecycle.Reason == string(apistats.NoticeClientThrottled) {
		r.DelayMs = ptr(msFloat(ev.Lifecycle.Duration))
	} else {
		r.RetryAfterSeconds = ptr(ev.Stats.RetryAfter.Seconds())
	}
	return r
}

// event is the inverse of throttledOf.
func (r *throttledRecord) event(ev *watch.Event) error {
	ev.Lifecycle.Reason, ev.Lifecycle.Verb, ev.Stats.APF = r.Reason, r.Verb, r.apfRecord.apf()
	ev.Lifecycle.Duration = time.Duration(math.Round(deref(r.DelayMs) * float64(time.Millisecond)))
	ev.Stats.RetryAfter = fromSeconds(deref(r.RetryAfterSeconds))
	return nil
}

func fromSeconds(f float64) time.Duration { return time.Duration(math.Round(f * float64(time.Second))) }
