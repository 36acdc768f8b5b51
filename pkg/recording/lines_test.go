package recording

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
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
	ev.Lifecycle.Reason = str()
	ev.Stats.Final = r.IntN(2) == 0
	if r.IntN(5) == 0 {
		return ev // no payload
	}
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
			if ev.Reconcile != nil {
				// Whole seconds: they read back as they were, truncated or not (unit "s-trunc").
				ev.Reconcile.RequeueAfter = ev.Reconcile.RequeueAfter.Truncate(time.Second)
				ev.Reconcile.Duration = ev.Reconcile.Duration.Truncate(time.Second)
			}
			got, err := c.appendLine(nil, &ev)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(Record(&ev, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s #%d: the writer wrote\n%s\nencoding/json\n%s", typ, i, got, want)
			}
			if bytes.Contains(got, []byte(`\ufffd`)) {
				continue // not UTF-8: it reads back as U+FFFD, written as itself
			}
			d, err := DecodeLine(got)
			if err != nil {
				if typ == watch.ControllerReconcile && (ev.Reconcile == nil || ev.Reconcile.Result == "") {
					continue // refused: no result
				}
				t.Fatalf("%s #%d: %v\n%s", typ, i, err, got)
			}
			again, err := c.appendLine(nil, &d.Event)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("%s #%d: decoded and encoded again:\n%s\nwas\n%s", typ, i, again, got)
			}
		}
	}
}

// Every member watch.LineMembers names is a field of its payload, written in the table's order.
func TestLineMembersResolve(t *testing.T) {
	for typ, c := range lineCodecs {
		if got, want := c.wire.NumField()-len(headFields), len(watch.LineMembers(typ)); got != want {
			t.Errorf("%s: %d members, the table lists %d", typ, got, want)
		}
		if c.wire.Kind() != reflect.Struct {
			t.Errorf("%s: wire form %s", typ, c.wire)
		}
	}
}
