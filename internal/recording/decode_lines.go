package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// lifecycleFrom decodes the lines of an informer's lifecycle (lists, watches, syncs, relists,
// errors) and the API's figures; false for a type it does not know.
func lifecycleFrom(w *wireLine, ev *watch.Event) bool {
	switch ev.Type {
	case watch.List:
		ev.ResourceVersion, ev.Items, ev.Duration, ev.Initial = w.ResourceVersion, w.Items, time.Duration(w.DurationMs)*time.Millisecond, w.Initial
		ev.Pages, ev.APF = w.Pages, w.apfRecord.apf()
	case watch.Watch:
		ev.ResourceVersion, ev.SendInitialEvents, ev.TimeoutSeconds = w.ResourceVersion, w.SendInitialEvents, w.TimeoutSeconds
		ev.APF = w.apfRecord.apf()
	case watch.ApiStats:
		decodeAPIStats(w, ev)
	case watch.Throttled:
		ev.Reason, ev.Verb, ev.APF = w.Reason, w.Verb, w.apfRecord.apf()
		ev.Duration, ev.RetryAfter = time.Duration(math.Round(w.DelayMs*float64(time.Millisecond))), fromSeconds(w.RetryAfterSeconds)
	case watch.WatchClosed:
		ev.Reason, ev.ResourceVersion = w.Reason, w.ResourceVersion
	case watch.Bookmark:
		ev.ResourceVersion, ev.InitialEventsEnd = w.ResourceVersion, w.InitialEventsEnd
	case watch.Synced:
		ev.Items, ev.Duration, ev.ResourceVersion = w.Items, time.Duration(w.DurationMs)*time.Millisecond, w.ResourceVersion
		if w.NotFound != nil && w.NotFound.Name != "" {
			ev.NotFound = &watch.ObjectKey{Namespace: w.NotFound.Namespace, Name: w.NotFound.Name}
		}
		ev.ListMode, ev.FellBack = w.ListMode, w.FellBack
	case watch.Resync:
		ev.Items = w.Items
	case watch.Relist:
		ev.Reason, ev.FromResourceVersion, ev.ResourceVersion = w.Reason, w.FromResourceVersion, w.ResourceVersion
		ev.Counts = watch.RelistCounts{Added: w.Added, Updated: w.Updated, Deleted: w.Deleted, Unchanged: w.Unchanged}
	case watch.Error, watch.Recovered:
		ev.Reason, ev.Message, ev.Verb = w.Reason, w.Message, w.Verb
		ev.Backoff = time.Duration(math.Round(w.BackoffMs * float64(time.Millisecond)))
	default:
		return false
	}
	return true
}

// decodeHeader reads a recording's header line.
func decodeHeader(line []byte) (Decoded, error) {
	var v struct {
		FormatVersion json.RawMessage `json:"formatVersion"`
	}
	if json.Unmarshal(line, &v) == nil && len(v.FormatVersion) > 0 && string(v.FormatVersion) != "null" {
		// Not a version this build can name (1e300, -1, 1.5): nothing after it can be read.
		if n, err := strconv.Atoi(string(v.FormatVersion)); err != nil || n < 1 {
			return Decoded{}, &FormatVersionError{Value: truncate(string(v.FormatVersion), 40)}
		}
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return Decoded{}, jsonError(err)
	}
	if h.FormatVersion < 1 {
		return Decoded{}, errors.New(`recording header without a "formatVersion"`)
	}
	return Decoded{Header: &h}, nil
}

// objectFrom decodes the fields of an object event (Added, Updated, Deleted).
func objectFrom(w *wireLine, ev *watch.Event) error {
	if w.Resource == "" {
		return fmt.Errorf(`%s line without "resource"`, ev.Type)
	}
	if w.Name == "" {
		return fmt.Errorf(`%s line without "name"`, ev.Type)
	}
	ev.Namespace, ev.Name, ev.ResourceVersion = w.Namespace, w.Name, w.ResourceVersion
	// A namespaced resource's objects have a namespace: the best guess a line allows.
	ev.Resource.Namespaced = w.Namespace != ""
	if ev.Type == watch.Updated {
		ev.OldResourceVersion = w.OldResourceVersion
	}
	ev.InitialList, ev.Delta, ev.Tombstone, ev.Filtered = w.InitialList, w.Delta, w.Tombstone, w.Filtered
	ev.Owners = ownersFrom(w.Owners)
	var err error
	if ev.Object, err = decodeObject(w.Object); err != nil {
		return err
	}
	ev.Queue, err = decodeQueue(w.Queue)
	return err
}

// reconciledFrom decodes a Reconciled line (the simulated workqueue's).
func reconciledFrom(w *wireLine, ev *watch.Event) error {
	ev.Key, ev.Wait, ev.Work, ev.Requeues, ev.Failed = w.Key, fromMs(w.WaitMs), fromMs(w.WorkMs), w.Requeues, w.Error
	ev.TriggerCount, ev.Requeue, ev.RequeueReason = w.TriggerCount, w.Requeue, w.RequeueReason
	var err error
	if ev.Triggers, err = triggersFrom(w.Triggers); err != nil {
		return err
	}
	ev.Queue, err = decodeQueue(w.Queue)
	return err
}

// informerFrom decodes an Informer line's configuration.
func informerFrom(w *wireLine) (*watch.InformerInfo, error) {
	info := &watch.InformerInfo{
		ClientGoVersion: w.ClientGoVersion, AtomicEvents: w.AtomicEvents,
		UnlockWhileProcessing: w.UnlockWhileProcessing, WatchList: w.WatchList,
		Namespace: w.Namespace, LabelSelector: w.LabelSelector, FieldSelector: w.FieldSelector,
		MetadataOnly: w.MetadataOnly, DropManagedFields: w.DropManagedFields,
		ListMode: w.ListMode, PageSize: w.PageSize, QPS: w.QPS, Burst: w.Burst, Wires: w.Wires,
	}
	if len(w.Queue) > 0 && string(w.Queue) != "null" {
		if err := json.Unmarshal(w.Queue, &info.Queue); err != nil {
			return nil, errors.New(`field "queue": want a string on an Informer line`)
		}
	}
	var err error
	switch {
	case w.ResyncPeriod != "":
		if info.ResyncPeriod, err = time.ParseDuration(w.ResyncPeriod); err != nil {
			return nil, fmt.Errorf(`field "resyncPeriod": %q is not a duration`, w.ResyncPeriod)
		}
	default:
		info.ResyncPeriod = time.Duration(math.Round(w.ResyncSeconds * float64(time.Second)))
	}
	for _, r := range w.Resources {
		info.Resources = append(info.Resources, r.resource())
	}
	for _, r := range w.OwnedResources {
		info.OwnedResources = append(info.OwnedResources, r.resource())
	}
	info.Events = w.Events
	return info, nil
}

// decodeObject decodes an event's object the way the dynamic client does: integers as int64,
// other numbers as float64, so the object deep-copies and re-encodes as it was.
func decodeObject(raw json.RawMessage) (*unstructured.Unstructured, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New(`field "object": want a JSON object`)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func decodeQueue(raw json.RawMessage) (*watch.QueueFigures, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var q queueRecord
	if err := json.Unmarshal(raw, &q); err != nil {
		return nil, errors.New(`field "queue": want {"depth", "adds", "retries"} numbers`)
	}
	return &watch.QueueFigures{Depth: q.Depth, Adds: q.Adds, Retries: q.Retries}, nil
}
