package recording

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// resourceRecord is a resource on the Informer line and the recording header.
type resourceRecord struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Resource   string `json:"resource"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
	// PrinterColumns: a custom resource's additionalPrinterColumns, read from its CRD at
	// startup; replay evaluates them from here, as the live run did.
	PrinterColumns []printerColumnRecord `json:"printerColumns,omitempty"`
}

// printerColumnRecord is one of a CRD's additionalPrinterColumns.
type printerColumnRecord struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	JSONPath string `json:"jsonPath"`
	Priority int32  `json:"priority,omitempty"`
}

func resourceRecordOf(r discovery.Resource) resourceRecord {
	rec := resourceRecord{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced}
	for _, c := range r.PrinterColumns {
		rec.PrinterColumns = append(rec.PrinterColumns, printerColumnRecord(c))
	}
	return rec
}

// resource is the inverse of resourceRecordOf.
func (r resourceRecord) resource() discovery.Resource {
	res := discovery.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced}
	for _, c := range r.PrinterColumns {
		res.PrinterColumns = append(res.PrinterColumns, discovery.PrinterColumn(c))
	}
	return res
}

type informerRecord struct {
	Time                  string           `json:"time"`
	Type                  watch.Type       `json:"type"`
	PluginVersion         string           `json:"pluginVersion"`
	ClientGoVersion       string           `json:"clientGoVersion"`
	Queue                 queueName        `json:"queue"`
	AtomicEvents          bool             `json:"atomicEvents"`
	UnlockWhileProcessing bool             `json:"unlockWhileProcessing"`
	WatchList             bool             `json:"watchList"`
	ResyncPeriod          string           `json:"resyncPeriod"`
	ResyncSeconds         float64          `json:"resyncSeconds"`
	Namespace             string           `json:"namespace"`
	LabelSelector         string           `json:"labelSelector"`
	FieldSelector         string           `json:"fieldSelector"`
	SecretsRedacted       bool             `json:"secretsRedacted"`
	MetadataOnly          bool             `json:"metadataOnly"`
	DropManagedFields     bool             `json:"dropManagedFields"`
	Resources             []resourceRecord `json:"resources"`
	// OwnedResources: with --owned, the resources followed below Resources.
	OwnedResources []resourceRecord `json:"ownedResources,omitempty"`
	// Events: with --events, Events about the shown objects are KubeEvent lines.
	Events   bool     `json:"events,omitempty"`
	ListMode string   `json:"listMode,omitempty"`
	PageSize int64    `json:"pageSize,omitempty"`
	QPS      *float32 `json:"qps,omitempty"`
	Burst    int      `json:"burst,omitempty"`
	// Wires: each resource's wire format (protobuf or json), by resource name.
	Wires map[string]string `json:"wires,omitempty"`
}

// informerRecordOf is the Informer line: how the informers were configured.
func informerRecordOf(ev *watch.Event, o Options) informerRecord {
	info := ev.Lifecycle.Info
	r := informerRecord{
		Time: formatTime(ev.Time), Type: ev.Type, PluginVersion: o.PluginVersion,
		ClientGoVersion: info.ClientGoVersion, Queue: queueName(info.Queue), AtomicEvents: info.AtomicEvents,
		UnlockWhileProcessing: info.UnlockWhileProcessing, WatchList: info.WatchList,
		ResyncPeriod: info.ResyncPeriod.String(), ResyncSeconds: info.ResyncPeriod.Seconds(),
		Namespace: info.Namespace, LabelSelector: info.LabelSelector, FieldSelector: info.FieldSelector,
		SecretsRedacted: o.SecretsRedacted, Resources: []resourceRecord{},
		MetadataOnly: info.MetadataOnly, DropManagedFields: info.DropManagedFields,
		ListMode: info.ListMode, PageSize: info.PageSize, Burst: info.Burst, Wires: info.Wires,
	}
	if info.QPS != 0 {
		r.QPS = ptr(info.QPS)
	}
	for _, res := range info.Resources {
		r.Resources = append(r.Resources, resourceRecordOf(res))
	}
	for _, res := range info.OwnedResources {
		r.OwnedResources = append(r.OwnedResources, resourceRecordOf(res))
	}
	r.Events = info.Events
	return r
}

// event is the inverse of informerRecordOf: the informers' configuration. (Its plugin version
// and redaction are the Decoded line's.)
func (r *informerRecord) event(ev *watch.Event) error {
	info := &watch.InformerInfo{
		ClientGoVersion: r.ClientGoVersion, Queue: string(r.Queue), AtomicEvents: r.AtomicEvents,
		UnlockWhileProcessing: r.UnlockWhileProcessing, WatchList: r.WatchList,
		Namespace: r.Namespace, LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector,
		MetadataOnly: r.MetadataOnly, DropManagedFields: r.DropManagedFields,
		ListMode: r.ListMode, PageSize: r.PageSize, QPS: deref(r.QPS), Burst: r.Burst, Wires: r.Wires,
	}
	var err error
	switch {
	case r.ResyncPeriod != "":
		if info.ResyncPeriod, err = time.ParseDuration(r.ResyncPeriod); err != nil {
			return fmt.Errorf(`field "resyncPeriod": %q is not a duration`, r.ResyncPeriod)
		}
	default:
		info.ResyncPeriod = time.Duration(math.Round(r.ResyncSeconds * float64(time.Second)))
	}
	for _, res := range r.Resources {
		info.Resources = append(info.Resources, res.resource())
	}
	for _, res := range r.OwnedResources {
		info.OwnedResources = append(info.OwnedResources, res.resource())
	}
	info.Events = r.Events
	ev.Lifecycle.Info = info
	return nil
}

// queueName is the Informer line's queue: the delta queue's name (on object lines, "queue" is
// the workqueue's figures).
type queueName string

// UnmarshalJSON reads a string; null is none.
func (q *queueName) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, (*string)(q)); err != nil {
		return &fieldError{field: "queue", want: "a string on an Informer line"}
	}
	return nil
}
