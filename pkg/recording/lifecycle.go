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
		r.ResourceVersion, r.Items, r.DurationMs, r.Initial = ptr(ev.ResourceVersion), ptr(ev.Lifecycle.Items), ptr(ev.Lifecycle.Duration.Milliseconds()), ptr(ev.Lifecycle.Initial)
		if ev.Lifecycle.Pages > 0 {
			r.Pages = ptr(ev.Lifecycle.Pages)
		}
		r.apfRecord = apfRecordOf(ev.Stats.APF)
	case watch.Watch:
		r.ResourceVersion, r.SendInitialEvents, r.TimeoutSeconds = ptr(ev.ResourceVersion), ptr(ev.Lifecycle.SendInitialEvents), ptr(ev.Lifecycle.TimeoutSeconds)
		r.apfRecord = apfRecordOf(ev.Stats.APF)
	case watch.WatchClosed:
		r.Reason, r.ResourceVersion = ptr(ev.Lifecycle.Reason), ptr(ev.ResourceVersion)
	case watch.Bookmark:
		r.ResourceVersion, r.InitialEventsEnd = ptr(ev.ResourceVersion), ptr(ev.Lifecycle.InitialEventsEnd)
	case watch.Synced:
		r.Items, r.DurationMs, r.ResourceVersion = ptr(ev.Lifecycle.Items), ptr(ev.Lifecycle.Duration.Milliseconds()), ptr(ev.ResourceVersion)
		if ev.Lifecycle.NotFound != nil {
			r.NotFound = &keyRecord{Namespace: ev.Lifecycle.NotFound.Namespace, Name: ev.Lifecycle.NotFound.Name}
		}
		if ev.Lifecycle.ListMode != "" {
			r.ListMode, r.FellBack = ev.Lifecycle.ListMode, ptr(ev.Lifecycle.FellBack)
		}
	case watch.Dropped:
		r.Items = ptr(ev.Lifecycle.Items)
	case watch.Recovered:
		r.Verb, r.Message = ptr(ev.Lifecycle.Verb), ptr(ev.Lifecycle.Message)
		if ev.Lifecycle.Backoff > 0 {
			r.BackoffMs = ptr(msFloat(ev.Lifecycle.Backoff))
		}
	case watch.Resync:
		r.Items = ptr(ev.Lifecycle.Items)
	case watch.Relist:
		r.Reason, r.FromResourceVersion, r.ResourceVersion = ptr(ev.Lifecycle.Reason), ptr(ev.Lifecycle.FromResourceVersion), ptr(ev.ResourceVersion)
		r.Added, r.Updated, r.Deleted, r.Unchanged = ptr(ev.Lifecycle.Counts.Added), ptr(ev.Lifecycle.Counts.Updated), ptr(ev.Lifecycle.Counts.Deleted), ptr(ev.Lifecycle.Counts.Unchanged)
	case watch.Error:
		r.Reason, r.Message, r.Verb = ptr(ev.Lifecycle.Reason), ptr(ev.Lifecycle.Message), ptr(ev.Lifecycle.Verb)
		if ev.Lifecycle.Backoff > 0 {
			r.BackoffMs = ptr(msFloat(ev.Lifecycle.Backoff))
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
		ev.ResourceVersion, ev.Lifecycle.Items, ev.Lifecycle.Duration, ev.Lifecycle.Initial = rv, deref(r.Items), time.Duration(deref(r.DurationMs))*time.Millisecond, deref(r.Initial)
		ev.Lifecycle.Pages, ev.Stats.APF = deref(r.Pages), r.apfRecord.apf()
	case watch.Watch:
		ev.ResourceVersion, ev.Lifecycle.SendInitialEvents, ev.Lifecycle.TimeoutSeconds = rv, deref(r.SendInitialEvents), deref(r.TimeoutSeconds)
		ev.Stats.APF = r.apfRecord.apf()
	case watch.WatchClosed:
		ev.Lifecycle.Reason, ev.ResourceVersion = deref(r.Reason), rv
	case watch.Bookmark:
		ev.ResourceVersion, ev.Lifecycle.InitialEventsEnd = rv, deref(r.InitialEventsEnd)
	case watch.Synced:
		ev.Lifecycle.Items, ev.Lifecycle.Duration, ev.ResourceVersion = deref(r.Items), time.Duration(deref(r.DurationMs))*time.Millisecond, rv
		if r.NotFound != nil && r.NotFound.Name != "" {
			ev.Lifecycle.NotFound = &watch.ObjectKey{Namespace: r.NotFound.Namespace, Name: r.NotFound.Name}
		}
		ev.Lifecycle.ListMode, ev.Lifecycle.FellBack = r.ListMode, deref(r.FellBack)
	case watch.Resync:
		ev.Lifecycle.Items = deref(r.Items)
	case watch.Relist:
		ev.Lifecycle.Reason, ev.Lifecycle.FromResourceVersion, ev.ResourceVersion = deref(r.Reason), deref(r.FromResourceVersion), rv
		ev.Lifecycle.Counts = watch.RelistCounts{Added: deref(r.Added), Updated: deref(r.Updated), Deleted: deref(r.Deleted), Unchanged: deref(r.Unchanged)}
	case watch.Error, watch.Recovered:
		ev.Lifecycle.Reason, ev.Lifecycle.Message, ev.Lifecycle.Verb = deref(r.Reason), deref(r.Message), deref(r.Verb)
		ev.Lifecycle.Backoff = time.Duration(math.Round(deref(r.BackoffMs) * float64(time.Millisecond)))
	}
	return nil
}
