package printer

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// FuzzPrint feeds arbitrary object content (control characters, huge strings, deep nesting, odd
// types) through every output form: nothing panics, JSON stays one valid object per line, and
// human output carries no control byte but its own colors and the line end.
func FuzzPrint(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"name":"a","namespace":"b","resourceVersion":"1"}}`,
		`{"metadata":{"name":"x\u001b]8;;http://e\u0007y","annotations":{"a":"\r\n\u009b"}}}`,
		`{"metadata":{"name":7,"labels":[1,2]},"data":null}`,
		`{"kind":"Secret","data":{"k":"aHVudGVy"},"stringData":{"s":{"deep":[[[[1]]]]}}}`,
		`{"metadata":{"name":"` + strings.Repeat("\u202e", 100) + `"}}`,
		`{}`,
	} {
		f.Add(s, "Updated")
	}
	f.Fuzz(func(t *testing.T, doc string, typ string) {
		var obj map[string]any
		if json.Unmarshal([]byte(doc), &obj) != nil || obj == nil {
			return
		}
		u := &unstructured.Unstructured{Object: obj}
		name, _ := obj["name"].(string)
		ev := watch.Event{
			Type:            watch.Type(typ),
			Time:            t0,
			Resource:        secrets,
			Name:            name + doc,
			Namespace:       doc,
			ResourceVersion: doc,
			Obj: watch.ObjectInfo{
				OldResourceVersion: doc,
				Delta:              watch.DeltaReplaced,
				Object:             u,
				OldObject:          u,
				Queue:              &watch.QueueFigures{},
			},
			Lifecycle: watch.LifecycleInfo{Reason: doc, Message: doc},
			Key:       doc,
		}
		for _, t2 := range []watch.Type{watch.Type(typ), watch.Added, watch.Updated, watch.Error, watch.Relist} {
			ev.Type = t2
			for _, opts := range []Options{{Output: "json"}, {}, {Color: true, ShowReconciles: true, ShowBookmarks: true}} {
				var buf bytes.Buffer
				p := New(&buf, opts)
				if err := p.Print(&ev); err != nil {
					t.Fatal(err)
				}
				_ = p.Flush()
				out := buf.String()
				if out == "" {
					continue
				}
				if opts.Output == "json" {
					var m map[string]any
					if strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &m) != nil {
						t.Fatalf("not one JSON line: %q", out)
					}
					continue
				}
				body := strings.NewReplacer(colorReset, "", colorRed, "", colorGreen, "", colorYellow, "", colorBlue, "", colorMagent, "", colorCyan, "", colorDim, "").Replace(out)
				if strings.ContainsAny(strings.TrimSuffix(body, "\n"), "\x1b\x07\r\n\x00\u009b") {
					t.Fatalf("raw control bytes in %q", out)
				}
			}
		}
	})
}
