package recording

import (
	"fmt"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// ownerRecord is one link of an owner chain in the JSON contract.
type ownerRecord struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	UID  string `json:"uid"`
}

func ownersOf(os []watch.Owner) []ownerRecord {
	if len(os) == 0 {
		return nil
	}
	out := make([]ownerRecord, len(os))
	for i, o := range os {
		out[i] = ownerRecord(o)
	}
	return out
}

func ownersFrom(rs []ownerRecord) []watch.Owner {
	if len(rs) == 0 {
		return nil
	}
	out := make([]watch.Owner, len(rs))
	for i, r := range rs {
		out[i] = watch.Owner(r)
	}
	return out
}

// regardingRecord is the object an Event is about.
type regardingRecord struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	FieldPath  string `json:"fieldPath,omitempty"`
}

// kubeEventRecord is a KubeEvent line: an Event (events.k8s.io/v1) about a shown object.
type kubeEventRecord struct {
	eventHead
	Namespace       string      `json:"namespace"`
	Name            string      `json:"name"`
	ResourceVersion string      `json:"resourceVersion"`
	InitialList     bool        `json:"initialList"`
	Delta           watch.Delta `json:"delta"`
	// EventType is the Event's type, Normal or Warning ("type" is the line's).
	EventType           string          `json:"eventType"`
	Reason              string          `json:"reason"`
	Note                string          `json:"note"`
	ReportingController string          `json:"reportingController"`
	ReportingInstance   string          `json:"reportingInstance,omitempty"`
	Action              string          `json:"action,omitempty"`
	Regarding           regardingRecord `json:"regarding"`
	Count               int64           `json:"count"`
	// EventTime is when the Event last happened, by its own clock (watch.KubeEventInfo).
	EventTime string        `json:"eventTime,omitempty"`
	Owners    []ownerRecord `json:"owners,omitempty"`
}

func kubeEventOf(ev *watch.Event) kubeEventRecord {
	k := ev.Kube
	if k == nil {
		k = &watch.KubeEventInfo{}
	}
	return kubeEventRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, ResourceVersion: ev.ResourceVersion,
		InitialList: ev.Obj.InitialList, Delta: ev.Obj.Delta,
		EventType: k.EventType, Reason: k.Reason, Note: k.Note, ReportingController: k.ReportingController,
		ReportingInstance: k.ReportingInstance, Action: k.Action, Regarding: regardingRecord(k.Regarding),
		Count: k.Count, Owners: ownersOf(ev.Obj.Owners), EventTime: formatTimeOrEmpty(k.EventTime),
	}
}

// formatTimeOrEmpty is formatTime, "" for the zero time.
func formatTimeOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// event is the inverse of kubeEventOf, for replay.
func (r *kubeEventRecord) event(ev *watch.Event) error {
	ev.Namespace, ev.Name, ev.ResourceVersion, ev.Obj.InitialList, ev.Obj.Delta = r.Namespace, r.Name, r.ResourceVersion, r.InitialList, r.Delta
	ev.Resource.Namespaced = true
	ev.Kube = &watch.KubeEventInfo{Reason: r.Reason, Note: r.Note, EventType: r.EventType, ReportingController: r.ReportingController,
		ReportingInstance: r.ReportingInstance, Action: r.Action, Count: r.Count, Regarding: watch.Regarding(r.Regarding)}
	ev.Obj.Owners = ownersFrom(r.Owners)
	if r.EventTime != "" {
		t, err := time.Parse(time.RFC3339Nano, r.EventTime)
		if err != nil {
			return fmt.Errorf(`field "eventTime": %q is not an RFC 3339 time`, r.EventTime)
		}
		ev.Kube.EventTime = t
	}
	return nil
}
