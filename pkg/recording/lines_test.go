package recording

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// randomLine fills an event of type typ with random values: strings that need escapes or are
// not UTF-8, negative and tiny durations, zero and far times, nil and empty lists and payloads.
func randomLine(r *rand.Rand, typ watch.Type) watch.Event {
	strs := []string{"", "web", "a<b>&c", "x\u2028y", "\xff\xfe", `q"uo\te`, "tab\there", "é"}
	str := func() string { return strs[r.IntN(len(strs))] }
	dur := func() time.Duration {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return time.Duration(r.Int64N(2000)) - 1000
		}
		return time.Duration(r.Int64N(1e15)) // up to 11 days
	}
	at := func() time.Time {
		switch r.IntN(4) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(r.Int64N(1<<40), r.Int64N(1e9)).In(time.FixedZone("x", 3600))
		}
		return time.Unix(r.Int64N(4e9), r.Int64N(1e9))
	}
	list := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		return []string{str(), str()}
	}
	var triggers []watch.Trigger
	for range r.IntN(3) {
		triggers = append(triggers, watch.Trigger{Type: watch.Type(str()), Delta: watch.Delta(str()), ResourceVersion: str(),
			Managers: list(), Attribution: str(), Time: at(), Resource: str(), Key: str()})
	}
	ev := watch.Event{Type: typ, Time: at(), Namespace: str(), Name: str(), Key: str(), ResourceVersion: str()}
	ev.Resource.Group, ev.Resource.Resource = str(), str()
	ev.Obj = watch.ObjectInfo{Delta: watch.Delta(str()), InitialList: r.IntN(2) == 0}
	if r.IntN(2) == 0 {
		ev.Obj.Queue = &watch.QueueFigures{Depth: r.Int64(), Adds: -r.Int64N(9)}
		ev.Obj.Owners = []watch.Owner{{Kind: str(), Name: str(), UID: str()}}
	}
	ev.Queued = watch.QueuedInfo{Wait: dur(), Work: dur(), Requeues: r.IntN(5), Failed: r.IntN(2) == 0, TriggerCount: r.IntN(9),
		Triggers: triggers, Requeue: r.IntN(2) == 0, RequeueReason: str()}
	ev.Obj.OldResourceVersion, ev.Obj.Tombstone, ev.Obj.Filtered = str(), r.IntN(2) == 0, str()
	ev.Obj.Ignored, ev.Obj.OutOfFocus = r.IntN(4) == 0, r.IntN(4) == 0
	if r.IntN(2) == 0 {
		ev.Obj.Audit = &watch.AuditInfo{User: str(), ImpersonatedUser: str(), ServiceAccount: str(), UserAgent: str(),
			AuditID: str(), Verb: str(), Subresource: str(), Matched: str()}
	}
	ev.Lifecycle = watch.LifecycleInfo{Items: r.IntN(9) - 1, Duration: dur(), Initial: r.IntN(2) == 0, Pages: r.IntN(3) - 1,
		ListMode: str(), FellBack: r.IntN(2) == 0, Backoff: dur(), SendInitialEvents: r.IntN(2) == 0,
		TimeoutSeconds: r.Int64N(600), InitialEventsEnd: r.IntN(2) == 0, Reason: str(), Message: str(), Verb: str(),
		FromResourceVersion: str(), Counts: watch.RelistCounts{Added: r.IntN(9), Updated: r.IntN(9), Deleted: r.IntN(9), Unchanged: r.IntN(9)}}
	if r.IntN(3) == 0 {
		ev.Lifecycle.Reason = string(apistats.NoticeClientThrottled)
	}
	if r.IntN(2) == 0 {
		ev.Lifecycle.NotFound = &watch.ObjectKey{Namespace: str(), Name: "n" + str()} // a key without a name is read as none
	}
	ev.Stats.Final = r.IntN(2) == 0
	ev.Stats.RetryAfter = dur()
	ev.Scrape.URL = str()
	if r.IntN(4) > 0 {
		res := func() []discovery.Resource {
			switch r.IntN(3) {
			case 0:
				return nil
			case 1:
				return []discovery.Resource{}
			}
			return []discovery.Resource{{Group: str(), Version: str(), Resource: str(), Kind: str(), Namespaced: r.IntN(2) == 0,
				PrinterColumns: []discovery.PrinterColumn{{Name: str(), Type: str(), JSONPath: str(), Priority: int32(r.IntN(2))}}}}
		}
		ev.Lifecycle.Info = &watch.InformerInfo{ClientGoVersion: str(), Queue: str(), AtomicEvents: r.IntN(2) == 0,
			UnlockWhileProcessing: r.IntN(2) == 0, WatchList: r.IntN(2) == 0, ResyncPeriod: dur(), Namespace: str(),
			LabelSelector: str(), FieldSelector: str(), Resources: res(), MetadataOnly: r.IntN(2) == 0,
			DropManagedFields: r.IntN(2) == 0, OwnedResources: res(), Events: r.IntN(2) == 0, ListMode: str(),
			PageSize: r.Int64N(3), QPS: float32(r.IntN(3)) - 1.5, Burst: r.IntN(3)}
		if r.IntN(2) == 0 {
			ev.Lifecycle.Info.Wires = map[string]string{str(): str()}
		}
	}
	if r.IntN(2) == 0 {
		ev.Stats.APF = &apistats.APF{FlowSchema: str(), PriorityLevel: str(), FlowSchemaUID: str(), PriorityLevelUID: str(), Note: str()}
	}
	if r.IntN(5) == 0 {
		return ev // no payload
	}
	f := func() float64 { return float64(r.IntN(2000))/8 - 10 }
	has := func() bool { return r.IntN(2) == 0 }
	ev.Scrape.Sample = &watch.QueueSample{Name: str(), Controller: str(), Depth: f(), Adds: f(), Retries: f(),
		UnfinishedSeconds: f(), LongestRunningSeconds: f(), QueueP50: f(), QueueP99: f(), WorkP50: f(), WorkP99: f(),
		HasQueueLatency: has(), HasWorkLatency: has(), HasReconciles: has(),
		Reconciles:      watch.ReconcileResults{Success: f(), Error: f(), Requeue: f(), RequeueAfter: f()},
		ReconcileErrors: f(), TerminalReconcileErrors: f(), ReconcilePanics: f(), ActiveWorkers: f(), MaxConcurrentReconciles: f(),
		HasWorkers: has(), ReconcileP50: f(), ReconcileP99: f(), HasReconcileTime: has(), HasRates: has(),
		AddsPerSecond: f(), ReconcilesPerSecond: f(), RetriesPerSecond: f(), ReconcileErrorsPerSecond: f(),
		Insecure: has(), From: str(), Folded: r.IntN(3), LogShows: r.IntN(3), HasLogShows: has(), Steady: r.IntN(3)}
	ev.HotLoop = &watch.HotLoopInfo{Reason: str(), Loop: str(), Suggestion: str(), Managers: list(), Fields: list(),
		Updates: r.IntN(100), Window: dur(), Duration: dur(), Deleted: r.IntN(2) == 0}
	ev.Kube = &watch.KubeEventInfo{Reason: str(), Note: str(), EventType: str(), ReportingController: str(), ReportingInstance: str(),
		Action: str(), Count: r.Int64(), EventTime: at(),
		Regarding: watch.Regarding{APIVersion: str(), Kind: str(), Namespace: str(), Name: str(), UID: str(), FieldPath: str()}}
	ev.Reconcile = &watch.ReconcileInfo{Controller: str(), ReconcileID: str(), Kind: str(), Result: str(), Error: str(),
		RequeueAfter: dur(), Duration: dur(), DurationKnown: r.IntN(2) == 0, Bounds: str(), Source: str(), Format: str(),
		Lines: r.IntN(9), ReasonMessage: str(), FilteredTriggers: r.IntN(3), UntrustedTime: r.IntN(2) == 0}
	ev.Stats.API = &apistats.Snapshot{Elapsed: dur(), Lists: r.IntN(9), StreamingLists: r.IntN(3), ListPages: r.IntN(9),
		LastListPages: r.IntN(3), BytesReceived: r.Int64(), BytesDecoded: r.Int64(), CompressedResponses: r.IntN(9),
		Objects: r.Int64N(99), Bookmarks: r.Int64N(9), WatchStreams: r.IntN(9), Reconnects: r.IntN(9), WatchOpen: r.IntN(2),
		WatchesClosed: r.IntN(9), WatchLivedTotal: dur(), WatchLivedMax: dur(), Throttled: r.IntN(3), RetryAfter: dur(),
		ClientWaits: r.IntN(3), ClientWait: dur(), ClientWaitMax: dur(),
		APF: apistats.APF{FlowSchema: str(), PriorityLevel: str(), FlowSchemaUID: str(), PriorityLevelUID: str(), Note: str()}}
	if r.IntN(2) == 0 {
		ev.Stats.API.Requests = []apistats.Request{{Verb: str(), Code: r.IntN(600), Count: r.IntN(99)}}
	}
	return ev
}

// The writers Encode uses for the lines whose payload is their line write what encoding/json
// writes of their wire value (Record), and a decoded line encodes again to the same bytes.
func TestLineWritersMatchWireValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for typ, c := range lineCodecs {
		for i := range 3000 {
			ev := randomLine(r, typ)
			if s := ev.Scrape.Sample; s != nil && !s.HasReconciles {
				// A sample's rates of reconciles are written only with its reconciles.
				s.ReconcilesPerSecond, s.ReconcileErrorsPerSecond = 0, 0
			}
			// Whole microseconds: a positive backoff below one is written 0, which reads back as none.
			ev.Lifecycle.Backoff = ev.Lifecycle.Backoff.Truncate(time.Microsecond)
			if ev.Reconcile != nil {
				// Whole seconds: they read back as they were, truncated or not (unit "s-trunc").
				ev.Reconcile.RequeueAfter = ev.Reconcile.RequeueAfter.Truncate(time.Second)
				ev.Reconcile.Duration = ev.Reconcile.Duration.Truncate(time.Second)
			}
			var o Options
			var derived *Derived
			if typ.IsObject() {
				rd := randomDerived(r)
				o.Derived = &rd
				if r.IntN(3) == 0 {
					ev.Obj.Attribution = rd.Update.attributionOrNil() // as a controller's log gives it
				}
				d := o.derive(&ev)
				derived = &d
			}
			got, err := c.appendLine(nil, &ev, derived)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(Record(&ev, o))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s #%d: the writer wrote\n%s\nencoding/json\n%s", typ, i, got, want)
			}
			if bytes.Contains(got, []byte(`\ufffd`)) || lineRecords[typ] == nil {
				continue // not UTF-8: it reads back as U+FFFD, written as itself; or never read (Dropped)
			}
			d, err := DecodeLine(got)
			if err != nil {
				if typ == watch.ControllerReconcile && (ev.Reconcile == nil || ev.Reconcile.Result == "") ||
					typ.IsObject() && (ev.Name == "" || ev.Resource.Resource == "") {
					continue // refused: no result, no name or resource
				}
				t.Fatalf("%s #%d: %v\n%s", typ, i, err, got)
			}
			if typ.IsObject() && (ev.Obj.Ignored || ev.Obj.OutOfFocus) {
				continue // not read back: the reader marks noise again
			}
			again, err := c.appendLine(nil, &d.Event, derived)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("%s #%d: decoded and encoded again:\n%s\nwas\n%s", typ, i, again, got)
			}
		}
	}
}

// Every member watch.LineMembers names is a field of its payload, written in the table's order.
func TestLineMembersResolve(t *testing.T) {
	for typ, c := range lineCodecs {
		members := watch.LineMembers(typ)
		if typ.IsObject() {
			members = objectMembers
		}
		if got, want := c.wire.NumField()-len(c.head()), len(members); got != want {
			t.Errorf("%s: %d members, the table lists %d", typ, got, want)
		}
		if c.wire.Kind() != reflect.Struct {
			t.Errorf("%s: wire form %s", typ, c.wire)
		}
	}
}

// Lifecycle, Throttled and ControllerQueue lines (written by hand in the contract's shape) read
// back into the payloads they came from, and encode again to the same bytes.
func TestLifecycleLinesAsWritten(t *testing.T) {
	const head = `"group":"apps","version":"v1","resource":"deployments","kind":"Deployment",`
	lines := []string{
		`{"time":"2026-11-21T05:00:01.123456789Z","type":"List",` + head + `"resourceVersion":"100","items":5,"durationMs":12,"initial":true,"pages":3}`,
		`{"time":"2026-11-21T05:00:05.123456789Z","type":"Throttled",` + head + `"reason":"ClientThrottled","verb":"WATCH","delayMs":180}`,
		`{"time":"2026-11-21T05:00:05.123456789Z","type":"Throttled",` + head + `"reason":"TooManyRequests","verb":"LIST","retryAfterSeconds":1,"flowSchema":"global-default"}`,
		`{"time":"2026-11-21T05:00:06.123456789Z","type":"ControllerQueue","url":"http://127.0.0.1:1/metrics","message":"no workqueue metrics"}`,
		`{"time":"2026-11-21T05:00:06.123456789Z","type":"ControllerQueue","url":"http://127.0.0.1:1/metrics","name":"widget","depth":2,"adds":4,"retries":0,"unfinishedSeconds":0,"longestRunningSeconds":0,"activeWorkers":1,"maxConcurrentReconciles":1}`,
		`{"time":"2026-11-21T05:00:07.123456789Z","type":"Synced",` + head + `"resourceVersion":"100","items":0,"durationMs":20,"notFound":{"namespace":"demo","name":"web"},"listMode":"list","fellBack":true}`,
	}
	var evs []watch.Event
	for _, l := range lines {
		d, err := DecodeLine([]byte(l))
		if err != nil {
			t.Fatalf("%v\n%s", err, l)
		}
		b, err := Encode(&d.Event, Options{})
		if err != nil || string(b) != l+"\n" {
			t.Errorf("encoded again:\n%s\nwas\n%s", b, l)
		}
		evs = append(evs, d.Event)
	}
	if ev := evs[0]; ev.Lifecycle.Duration != 12*time.Millisecond || ev.Lifecycle.Pages != 3 || ev.Stats.APF != nil || ev.ResourceVersion != "100" {
		t.Errorf("List: %+v, APF %v", ev.Lifecycle, ev.Stats.APF)
	}
	if ev := evs[1]; ev.Lifecycle.Duration != 180*time.Millisecond || ev.Stats.RetryAfter != 0 || ev.Stats.APF != nil {
		t.Errorf("ClientThrottled: delay %v, retry after %v, APF %v", ev.Lifecycle.Duration, ev.Stats.RetryAfter, ev.Stats.APF)
	}
	if ev := evs[2]; ev.Stats.RetryAfter != time.Second || ev.Stats.APF == nil || ev.Stats.APF.FlowSchema != "global-default" {
		t.Errorf("TooManyRequests: retry after %v, APF %v", ev.Stats.RetryAfter, ev.Stats.APF)
	}
	if ev := evs[3]; ev.Scrape.Sample != nil || ev.Lifecycle.Message != "no workqueue metrics" || ev.Resource.Resource != "" {
		t.Errorf("a page without metrics: sample %v, message %q", ev.Scrape.Sample, ev.Lifecycle.Message)
	}
	if s := evs[4].Scrape.Sample; s == nil || s.Name != "widget" || s.Depth != 2 || !s.HasWorkers || s.HasReconciles || s.HasRates || s.HasQueueLatency {
		t.Errorf("a queue's sample: %+v", s)
	}
	if ev := evs[5]; ev.Lifecycle.NotFound == nil || *ev.Lifecycle.NotFound != (watch.ObjectKey{Namespace: "demo", Name: "web"}) ||
		!ev.Lifecycle.FellBack || ev.Lifecycle.ListMode != "list" {
		t.Errorf("Synced: %+v", ev.Lifecycle)
	}
}

// An Informer line's resync period is its resyncPeriod, or its resyncSeconds when it has no
// resyncPeriod; its plugin version and redaction are the Decoded line's, and an encoding's own.
func TestInformerLineResyncAndVersion(t *testing.T) {
	for line, want := range map[string]time.Duration{
		`{"time":"2026-11-21T05:00:00Z","type":"Informer","pluginVersion":"v1.2.3","secretsRedacted":true,"resyncPeriod":"1m30s"}`:                  90 * time.Second,
		`{"time":"2026-11-21T05:00:00Z","type":"Informer","pluginVersion":"v1.2.3","secretsRedacted":true,"resyncSeconds":30}`:                      30 * time.Second,
		`{"time":"2026-11-21T05:00:00Z","type":"Informer","pluginVersion":"v1.2.3","secretsRedacted":true,"resyncPeriod":"2m","resyncSeconds":120}`: 2 * time.Minute,
	} {
		d, err := DecodeLine([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Event.Lifecycle.Info.ResyncPeriod; got != want {
			t.Errorf("%s: resync %v, want %v", line, got, want)
		}
		if d.PluginVersion != "v1.2.3" || !d.SecretsRedacted {
			t.Errorf("%s: plugin %q, redacted %v", line, d.PluginVersion, d.SecretsRedacted)
		}
		b, err := Encode(&d.Event, Options{PluginVersion: "v9", SecretsRedacted: false})
		if err != nil || !bytes.Contains(b, []byte(`"pluginVersion":"v9"`)) || !bytes.Contains(b, []byte(`"secretsRedacted":false`)) {
			t.Errorf("encoded with other options: %s", b)
		}
	}
	if _, err := DecodeLine([]byte(`{"time":"2026-11-21T05:00:00Z","type":"Informer","resyncPeriod":"soon"}`)); err == nil ||
		err.Error() != `field "resyncPeriod": "soon" is not a duration` {
		t.Errorf("a resync period that is not a duration: %v", err)
	}
}

// randomDerived is what a printer could derive of an object line: an object, a state, an
// update's attribution, changes and diff, each possibly absent or empty.
func randomDerived(r *rand.Rand) Derived {
	strs := []string{"", "web", "a<b>&c", "\u2028", `q"uo\te`, "é"}
	str := func() string { return strs[r.IntN(len(strs))] }
	var d Derived
	if r.IntN(4) > 0 {
		d.Object = map[string]any{"kind": str(), "n": int64(r.IntN(9)), "f": 1.5, "m": map[string]any{str(): []any{str(), true, nil}}}
	}
	if r.IntN(2) == 0 {
		d.State = &State{Status: str(), Summary: str(), Message: str(), Previous: str()}
		if r.IntN(2) == 0 {
			d.State.Finalizers = []string{str()}
		}
	}
	if r.IntN(3) == 0 {
		return d
	}
	d.Update = &Update{Attribution: diff.Attribution{Rule: str(), Why: str(), NoOp: r.IntN(2) == 0}, Diff: str()}
	switch r.IntN(3) {
	case 0:
		d.Update.Attribution.Managers = []diff.Manager{{Manager: str(), Operation: str(), Subresource: str()}}
	case 1:
		d.Update.Attribution.Managers = []diff.Manager{}
	}
	if r.IntN(2) == 0 {
		d.Update.Attribution.Reconcile = &diff.ReconcileRef{Controller: str(), ReconcileID: str(), Kind: str(), Name: str()}
		d.Update.Attribution.Rule = []string{diff.RuleReconcile, diff.RuleDelete}[r.IntN(2)]
	}
	switch r.IntN(3) {
	case 0:
		d.Update.Changes = &[]Change{}
	case 1:
		d.Update.Changes = &[]Change{{Path: str(), Old: json.RawMessage(`1`), Ignored: r.IntN(2) == 0}}
	}
	return d
}

// attributionOrNil is u's attribution, nil without an update.
func (u *Update) attributionOrNil() *diff.Attribution {
	if u == nil {
		return nil
	}
	a := u.Attribution
	return &a
}

// An object line's noise marks and an Added line's oldResourceVersion are not read back: the
// reader's own --ignore-path and --only-path mark noise again, and only an update has an old
// version.
func TestObjectLineMarksNotReadBack(t *testing.T) {
	d, err := DecodeLine([]byte(`{"time":"2026-11-21T05:00:00Z","type":"Added","group":"","version":"v1","resource":"configmaps","kind":"ConfigMap",` +
		`"namespace":"demo","name":"web","resourceVersion":"9","oldResourceVersion":"8","initialList":false,"delta":"Added","tombstone":false,` +
		`"object":{"kind":"ConfigMap"},"ignored":true,"outOfFocus":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if o := d.Event.Obj; o.Ignored || o.OutOfFocus || o.OldResourceVersion != "" || o.Object == nil || d.Event.Name != "web" {
		t.Errorf("read back: ignored %v, out of focus %v, old resourceVersion %q, object %v", o.Ignored, o.OutOfFocus, o.OldResourceVersion, o.Object)
	}
}
