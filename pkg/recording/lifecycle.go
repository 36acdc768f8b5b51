package recording

import (
	"math"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// lifecycleRecord is a lifecycle event in the JSON contract; each type fills its own fields.
type lifecycleRecord struct {
	eventHead

	ResourceVersion     *string    `json:"resourceVersion,omitempty"`
	Items               *int       `json:"items,omitempty"`
	DurationMs          *int64     `json:"durationMs,omitempty"`
	Initial             *bool      `json:"initial,omitempty"`
	SendInitialEvents   *bool      `json:"sendInitialEvents,omitempty"`
	TimeoutSeconds      *int64     `json:"timeoutSeconds,omitempty"`
	InitialEventsEnd    *bool      `json:"initialEventsEnd,omitempty"`
	Reason              *string    `json:"reason,omitempty"`
	Message             *string    `json:"message,omitempty"`
	Verb                *string    `json:"verb,omitempty"`
	FromResourceVersion *string    `json:"fromResourceVersion,omitempty"`
	Added               *int       `json:"added,omitempty"`
	Updated             *int       `json:"updated,omitempty"`
	Deleted             *int       `json:"deleted,omitempty"`
	Unchanged           *int       `json:"unchanged,omitempty"`
	NotFound            *keyRecord `json:"notFound,omitempty"`
	Pages               *int       `json:"pages,omitempty"`
	ListMode            string     `json:"listMode,omitempty"`
	FellBack            *bool      `json:"fellBack,omitempty"`
	BackoffMs           *float64   `json:"backoffMs,omitempty"`
	apfRecord
}

// keyRecord names one object.
type keyRecord struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// lifecycleOf is the line of an informer's lifecycle event: only the fields its type has.
func lifecycleOf(ev *watch.Event) lifecycleRecord {
	r := lifecycleRecord{
		eventHead: headOf(ev),
	}
	switch ev.Type {
	case watch.List:
		r.ResourceVersion, r.Items, r.DurationMs, r.Initial = ptr(ev.ResourceVersion), ptr(ev.Items), ptr(ev.Duration.Milliseconds()), ptr(ev.Initial)
		if ev.Pages > 0 {
			r.Pages = ptr(ev.Pages)
		}
		r.apfRecord = apfRecordOf(ev.APF)
	case watch.Watch:
		r.ResourceVersion, r.SendInitialEvents, r.TimeoutSeconds = ptr(ev.ResourceVersion), ptr(ev.SendInitialEvents), ptr(ev.TimeoutSeconds)
		r.apfRecord = apfRecordOf(ev.APF)
	case watch.WatchClosed:
		r.Reason, r.ResourceVersion = ptr(ev.Reason), ptr(ev.ResourceVersion)
	case watch.Bookmark:
		r.ResourceVersion, r.InitialEventsEnd = ptr(ev.ResourceVersion), ptr(ev.InitialEventsEnd)
	case watch.Synced:
		r.Items, r.DurationMs, r.ResourceVersion = ptr(ev.Items), ptr(ev.Duration.Milliseconds()), ptr(ev.ResourceVersion)
		if ev.NotFound != nil {
			r.NotFound = &keyRecord{Namespace: ev.NotFound.Namespace, Name: ev.NotFound.Name}
		}
		if ev.ListMode != "" {
			r.ListMode, r.FellBack = ev.ListMode, ptr(ev.FellBack)
		}
	case watch.Dropped:
		r.Items = ptr(ev.Items)
	case watch.Recovered:
		r.Verb, r.Message = ptr(ev.Verb), ptr(ev.Message)
		if ev.Backoff > 0 {
			r.BackoffMs = ptr(msFloat(ev.Backoff))
		}
	case watch.Resync:
		r.Items = ptr(ev.Items)
	case watch.Relist:
		r.Reason, r.FromResourceVersion, r.ResourceVersion = ptr(ev.Reason), ptr(ev.FromResourceVersion), ptr(ev.ResourceVersion)
		r.Added, r.Updated, r.Deleted, r.Unchanged = ptr(ev.Counts.Added), ptr(ev.Counts.Updated), ptr(ev.Counts.Deleted), ptr(ev.Counts.Unchanged)
	case watch.Error:
		r.Reason, r.Message, r.Verb = ptr(ev.Reason), ptr(ev.Message), ptr(ev.Verb)
		if ev.Backoff > 0 {
			r.BackoffMs = ptr(msFloat(ev.Backoff))
		}
	}
	return r
}

// event is the inverse of lifecycleOf, for the types DecodeLine reads as lifecycle lines
// (lifecycleTypes).
func (r *lifecycleRecord) event(ev *watch.Event) error {
	rv := deref(r.ResourceVersion)
	switch ev.Type {
	case watch.List:
		ev.ResourceVersion, ev.Items, ev.Duration, ev.Initial = rv, deref(r.Items), time.Duration(deref(r.DurationMs))*time.Millisecond, deref(r.Initial)
		ev.Pages, ev.APF = deref(r.Pages), r.apfRecord.apf()
	case watch.Watch:
		ev.ResourceVersion, ev.SendInitialEvents, ev.TimeoutSeconds = rv, deref(r.SendInitialEvents), deref(r.TimeoutSeconds)
		ev.APF = r.apfRecord.apf()
	case watch.WatchClosed:
		ev.Reason, ev.ResourceVersion = deref(r.Reason), rv
	case watch.Bookmark:
		ev.ResourceVersion, ev.InitialEventsEnd = rv, deref(r.InitialEventsEnd)
	case watch.Synced:
		ev.Items, ev.Duration, ev.ResourceVersion = deref(r.Items), time.Duration(deref(r.DurationMs))*time.Millisecond, rv
		if r.NotFound != nil && r.NotFound.Name != "" {
			ev.NotFound = &watch.ObjectKey{Namespace: r.NotFound.Namespace, Name: r.NotFound.Name}
		}
		ev.ListMode, ev.FellBack = r.ListMode, deref(r.FellBack)
	case watch.Resync:
		ev.Items = deref(r.Items)
	case watch.Relist:
		ev.Reason, ev.FromResourceVersion, ev.ResourceVersion = deref(r.Reason), deref(r.FromResourceVersion), rv
		ev.Counts = watch.RelistCounts{Added: deref(r.Added), Updated: deref(r.Updated), Deleted: deref(r.Deleted), Unchanged: deref(r.Unchanged)}
	case watch.Error, watch.Recovered:
		ev.Reason, ev.Message, ev.Verb = deref(r.Reason), deref(r.Message), deref(r.Verb)
		ev.Backoff = time.Duration(math.Round(deref(r.BackoffMs) * float64(time.Millisecond)))
	}
	return nil
}
