package recording_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// An event as the JSON line `-o json` prints and `--record` writes (docs/json.md), and back:
// Encode writes one line per event (its object's keys sorted); a Decoder reads a stream's lines in order and
// gives each Updated event back the object it replaced, as the live informer's cache held it.
func Example() {
	configmaps := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	cm := func(rv, mode string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": "demo", "resourceVersion": rv},
			"data":     map[string]any{"mode": mode}}}
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	events := []watch.Event{
		{
			Type:            watch.Added,
			Obj:             watch.ObjectInfo{Delta: watch.DeltaAdded, Object: cm("41", "fast")},
			Time:            at,
			Resource:        configmaps,
			Namespace:       "demo",
			Name:            "settings",
			ResourceVersion: "41",
		},
		{
			Type: watch.Updated,
			Obj: watch.ObjectInfo{
				Delta:              watch.DeltaUpdated,
				OldResourceVersion: "41",
				Object:             cm("42", "safe"),
			},
			Time:            at.Add(time.Second),
			Resource:        configmaps,
			Namespace:       "demo",
			Name:            "settings",
			ResourceVersion: "42",
		},
	}

	dec := recording.NewDecoder()
	for i := range events {
		line, err := recording.Encode(&events[i], recording.Options{})
		if err != nil {
			panic(err)
		}
		fmt.Print(string(line)) // a line ends in its newline
		d, err := dec.Decode(line)
		if err != nil {
			panic(err)
		}
		if ev := d.Event; ev.Obj.OldObject != nil {
			fmt.Printf("decoded: %s %s/%s, mode %v, was %v\n", ev.Type, ev.Namespace, ev.Name,
				ev.Obj.Object.Object["data"].(map[string]any)["mode"], ev.Obj.OldObject.Object["data"].(map[string]any)["mode"])
		}
	}
	// Output:
	// {"time":"2026-11-28T10:00:00.000000000Z","type":"Added","group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespace":"demo","name":"settings","resourceVersion":"41","initialList":false,"delta":"Added","tombstone":false,"object":{"apiVersion":"v1","data":{"mode":"fast"},"kind":"ConfigMap","metadata":{"name":"settings","namespace":"demo","resourceVersion":"41"}}}
	// {"time":"2026-11-28T10:00:01.000000000Z","type":"Updated","group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespace":"demo","name":"settings","resourceVersion":"42","oldResourceVersion":"41","initialList":false,"delta":"Updated","tombstone":false,"object":{"apiVersion":"v1","data":{"mode":"safe"},"kind":"ConfigMap","metadata":{"name":"settings","namespace":"demo","resourceVersion":"42"}}}
	// decoded: Updated demo/settings, mode safe, was fast
}
