package recording

import (
	"math"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// requestRecord counts the responses of one verb and status code (code 0: no response).
type requestRecord struct {
	Verb  string `json:"verb"`
	Code  int    `json:"code"`
	Count int    `json:"count"`
}

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

// apiStatsRecord is an ApiStats line: one resource's API figures since the run began.
type apiStatsRecord struct {
	eventHead
	apiStatsFields
	apfRecord
}

// apiStatsFields are an ApiStats line's figures.
type apiStatsFields struct {
	Final               bool            `json:"final"`
	ElapsedSeconds      float64         `json:"elapsedSeconds"`
	Requests            []requestRecord `json:"requests"`
	Lists               int             `json:"lists"`
	StreamingLists      int             `json:"streamingLists"`
	ListPages           int             `json:"listPages"`
	LastListPages       int             `json:"lastListPages"`
	BytesReceived       int64           `json:"bytesReceived"`
	BytesDecoded        int64           `json:"bytesDecoded"`
	CompressedResponses int             `json:"compressedResponses"`
	Objects             int64           `json:"objects"`
	Bookmarks           int64           `json:"bookmarks"`
	WatchStreams        int             `json:"watchStreams"`
	WatchReconnects     int             `json:"watchReconnects"`
	WatchOpen           int             `json:"watchOpen"`
	WatchesClosed       int             `json:"watchesClosed"`
	WatchLivedSeconds   float64         `json:"watchLivedSeconds"`
	WatchLivedMaxSecs   float64         `json:"watchLivedMaxSeconds"`
	Throttled           int             `json:"throttled"`
	RetryAfterSeconds   float64         `json:"retryAfterSeconds"`
	ClientWaits         int             `json:"clientWaits"`
	ClientWaitSeconds   float64         `json:"clientWaitSeconds"`
	ClientWaitMaxSecs   float64         `json:"clientWaitMaxSeconds"`
}

func apiStatsOf(ev *watch.Event) apiStatsRecord {
	s := ev.Stats.API
	if s == nil {
		s = &apistats.Snapshot{}
	}
	r := apiStatsRecord{eventHead: headOf(ev), apfRecord: apfRecordOf(&s.APF), apiStatsFields: apiStatsFields{
		Final: ev.Stats.Final, ElapsedSeconds: s.Elapsed.Seconds(), Requests: []requestRecord{},
		Lists: s.Lists, StreamingLists: s.StreamingLists, ListPages: s.ListPages, LastListPages: s.LastListPages,
		BytesReceived: s.BytesReceived, BytesDecoded: s.BytesDecoded, CompressedResponses: s.CompressedResponses,
		Objects: s.Objects, Bookmarks: s.Bookmarks,
		WatchStreams: s.WatchStreams, WatchReconnects: s.Reconnects, WatchOpen: s.WatchOpen, WatchesClosed: s.WatchesClosed,
		WatchLivedSeconds: s.WatchLivedTotal.Seconds(), WatchLivedMaxSecs: s.WatchLivedMax.Seconds(),
		Throttled: s.Throttled, RetryAfterSeconds: s.RetryAfter.Seconds(),
		ClientWaits: s.ClientWaits, ClientWaitSeconds: s.ClientWait.Seconds(), ClientWaitMaxSecs: s.ClientWaitMax.Seconds(),
	}}
	for _, q := range s.Requests {
		r.Requests = append(r.Requests, requestRecord(q))
	}
	return r
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

// event is the inverse of apiStatsOf.
func (r *apiStatsRecord) event(ev *watch.Event) error {
	s := &apistats.Snapshot{
		Resource: ev.Resource.String(), Elapsed: fromSeconds(r.ElapsedSeconds),
		Lists: r.Lists, StreamingLists: r.StreamingLists, ListPages: r.ListPages, LastListPages: r.LastListPages,
		BytesReceived: r.BytesReceived, BytesDecoded: r.BytesDecoded, CompressedResponses: r.CompressedResponses,
		Objects: r.Objects, Bookmarks: r.Bookmarks,
		WatchStreams: r.WatchStreams, Reconnects: r.WatchReconnects, WatchOpen: r.WatchOpen, WatchesClosed: r.WatchesClosed,
		WatchLivedTotal: fromSeconds(r.WatchLivedSeconds), WatchLivedMax: fromSeconds(r.WatchLivedMaxSecs),
		Throttled: r.Throttled, RetryAfter: fromSeconds(r.RetryAfterSeconds),
		ClientWaits: r.ClientWaits, ClientWait: fromSeconds(r.ClientWaitSeconds), ClientWaitMax: fromSeconds(r.ClientWaitMaxSecs),
	}
	if a := r.apfRecord.apf(); a != nil {
		s.APF = *a
	}
	for _, q := range r.Requests {
		s.Requests = append(s.Requests, apistats.Request(q))
	}
	ev.Stats.API, ev.Stats.Final = s, r.Final
	return nil
}

func fromSeconds(f float64) time.Duration { return time.Duration(math.Round(f * float64(time.Second))) }
