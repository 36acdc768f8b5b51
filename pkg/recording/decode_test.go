package recording_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Objects decode as the dynamic client decodes them: integers int64, so DeepCopy works.
func TestDecodeObjectNumbers(t *testing.T) {
	ev, err := recording.DecodeEvent([]byte(`{"time":"2026-11-21T05:00:00Z","type":"Added","group":"apps","version":"v1","resource":"deployments","kind":"Deployment","namespace":"demo","name":"web","resourceVersion":"9","delta":"Added","object":{"metadata":{"name":"web","generation":12345678901234},"spec":{"replicas":3,"ratio":0.5}}}`))
	if err != nil {
		t.Fatal(err)
	}
	spec := ev.Obj.Object.Object["spec"].(map[string]any)
	if _, ok := spec["replicas"].(int64); !ok {
		t.Errorf("replicas is %T, want int64", spec["replicas"])
	}
	if _, ok := spec["ratio"].(float64); !ok {
		t.Errorf("ratio is %T, want float64", spec["ratio"])
	}
	if ev.Obj.Object.GetGeneration() != 12345678901234 {
		t.Errorf("generation = %d", ev.Obj.Object.GetGeneration())
	}
	_ = ev.Obj.Object.DeepCopy()
	if !ev.Resource.Namespaced || ev.Obj.Queue != nil {
		t.Errorf("resource %+v, queue %v", ev.Resource, ev.Obj.Queue)
	}
}

func TestDecodeErrors(t *testing.T) {
	const obj = `"time":"2026-11-21T05:00:00Z","type":"Added","resource":"configmaps","name":"a"`
	tests := []struct{ name, line, want string }{
		{"empty", ``, "empty line"},
		{"truncated", `{"time":"2026-11-21T05:00:00Z","type":"Add`, "invalid JSON: unexpected end of JSON input"},
		{"garbage", `{"type": Added}`, "invalid JSON: invalid character 'A'"},
		{"not an object", `[1,2]`, "invalid JSON: not an object"},
		{"a string", `"Added"`, "invalid JSON: not an object"},
		{"no type", `{"time":"2026-11-21T05:00:00Z"}`, `no "type" field`},
		{"type not a string", `{"time":"2026-11-21T05:00:00Z","type":3}`, `field "type": want a string, got number`},
		{"no time", `{"type":"Synced"}`, `no "time" field`},
		{"bad time", `{"time":"yesterday","type":"Synced"}`, `field "time": "yesterday" is not an RFC 3339 time`},
		{"object not an object", `{` + obj + `,"object":"x"}`, `field "object": want a JSON object`},
		{"queue not an object", `{` + obj + `,"queue":"RealFIFO"}`, `field "queue": want {"depth", "adds", "retries"} numbers`},
		{"rv a number", `{` + obj + `,"resourceVersion":12}`, `field "resourceVersion": want a string, got number`},
		{"group a number", `{"time":"2026-11-21T05:00:00Z","type":"Synced","group":5}`, `field "group": want a string, got number`},
		{"hot loop group a number", `{"time":"2026-11-21T05:00:00Z","type":"HotLoop","group":5}`, `field "group": want a string, got number`},
		{"reconciles a string", `{"time":"2026-11-21T05:00:00Z","type":"ControllerQueue","name":"q","reconciles":"x"}`, `field "reconciles": want an object, got string`},
		{"api figures a string", `{"time":"2026-11-21T05:00:00Z","type":"ApiStats","lists":"x"}`, `field "lists": want a number, got string`},
		{"no name", `{"time":"2026-11-21T05:00:00Z","type":"Deleted","resource":"configmaps"}`, `Deleted line without "name"`},
		{"no resource", `{"time":"2026-11-21T05:00:00Z","type":"Updated","name":"a"}`, `Updated line without "resource"`},
		{"informer queue", `{"time":"2026-11-21T05:00:00Z","type":"Informer","queue":{}}`, `field "queue": want a string on an Informer line`},
		{"resync period", `{"time":"2026-11-21T05:00:00Z","type":"Informer","resyncPeriod":"often"}`, `field "resyncPeriod": "often" is not a duration`},
		{"header without version", `{"type":"Recording"}`, `recording header without a "formatVersion"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := recording.DecodeLine([]byte(tt.line))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// FuzzDecodeLine feeds arbitrary lines to the decoder, seeded with the printer's golden JSON
// lines: each decodes or is refused with an error, never a panic, and whatever decodes prints.
func FuzzDecodeLine(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("..", "..", "pkg", "printer", "testdata", "*.ndjson"))
	if len(names) == 0 {
		f.Fatal("no seeds: pkg/printer/testdata/*.ndjson")
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.Add(bytes.Clone(sc.Bytes()))
		}
	}
	f.Add([]byte(`{"type":"Recording","formatVersion":1,"resources":[{"resource":"widgets","printerColumns":[{"name":"x","jsonPath":".x"}]}]}`))
	// The hostile run's lines: a terminal escape in every string field (Error.verb once went
	// out raw), a format version past any int.
	f.Add([]byte(`{"time":"2026-11-25T02:06:13.05Z","type":"Error","reason":"Forbidden","message":"m","verb":"x\u001b]52;c;cHduZWQ=\u0007\u001b[2J\rfake"}`))
	f.Add([]byte(`{"type":"Recording","formatVersion":1e300}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		d, err := recording.DecodeLine(line)
		if err != nil || d.Header != nil {
			return
		}
		// Whatever decodes reaches a terminal escaped: no ESC, BEL or CR of the line's.
		var human bytes.Buffer
		hp := printer.New(&human, printer.Options{})
		if err := hp.Print(&d.Event); err == nil && hp.Flush() == nil {
			if i := bytes.IndexAny(bytes.TrimSuffix(human.Bytes(), []byte("\n")), "\x1b\x07\r\n"); i >= 0 {
				t.Fatalf("raw control byte in %q", human.String())
			}
		}
		// Whatever decodes prints without panicking, in both forms.
		var out bytes.Buffer
		for _, o := range []printer.Options{{Output: "json"}, {}} {
			p := printer.New(&out, o)
			if d.Event.Type == watch.Informer && d.Event.Lifecycle.Info == nil {
				t.Fatal("Informer without Info")
			}
			_ = p.Print(&d.Event)
		}
	})
}
