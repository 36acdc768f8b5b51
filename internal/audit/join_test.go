package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	t0         = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	configMaps = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
)

// line is an audit log line: a ResponseComplete write of configmap ns/name by user, at t0+at;
// rv "" makes it a Metadata-level event (no response object).
func line(id, verb, user, name, rv string, at time.Duration, code int) string {
	resp := ""
	if rv != "" {
		resp = fmt.Sprintf(`,"responseObject":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q},"data":{"k":"v"}}`, name, rv)
	}
	level := "Metadata"
	if rv != "" {
		level = "RequestResponse"
	}
	ts := t0.Add(at).Format(time.RFC3339Nano)
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":%q,"auditID":%q,"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/%s","verb":%q,"user":{"username":%q,"groups":["system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.34.0","objectRef":{"resource":"configmaps","namespace":"ns","name":%q,"apiVersion":"v1"},"responseStatus":{"metadata":{},"code":%d}%s,"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
		level, id, name, verb, user, name, code, resp, ts, ts)
}

func objectLine(typ watch.Type, name, oldRV, rv string, at time.Duration) watch.Event {
	return watch.Event{Type: typ, Time: t0.Add(at), Resource: configMaps, Namespace: "ns", Name: name, ResourceVersion: rv, Obj: watch.ObjectInfo{OldResourceVersion: oldRV}}
}

func mustParse(t *testing.T, s string) *Event {
	t.Helper()
	e, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return &e
}

// who is what a test compares of a line: who made it and how it was matched.
func who(evs []watch.Event) []string {
	var out []string
	for _, ev := range evs {
		s := string(ev.Type) + " " + ev.Name + " rv=" + ev.ResourceVersion + ": "
		if ev.Obj.Audit == nil {
			s += "-"
		} else {
			s += ev.Obj.Audit.By() + " " + ev.Obj.Audit.Verb + " " + ev.Obj.Audit.AuditID + " by " + ev.Obj.Audit.Matched
		}
		out = append(out, s)
	}
	return out
}

func TestJoinMatches(t *testing.T) {
	tests := []struct {
		name  string
		audit []string
		lines []watch.Event
		want  []string
	}{
		{
			name: "resourceVersion: create, update, and a delete's Status response",
			audit: []string{
				line("a1", "create", "alice", "cm", "10", 0, 201),
				line("a2", "update", "bob", "cm", "11", time.Second, 200),
				line("a3", "delete", "carol", "cm", "", 2*time.Second, 200),
			},
			lines: []watch.Event{
				objectLine(watch.Added, "cm", "", "10", 0),
				objectLine(watch.Updated, "cm", "10", "11", time.Second),
				objectLine(watch.Deleted, "cm", "", "12", 2*time.Second),
			},
			want: []string{
				"Added cm rv=10: alice create a1 by resourceVersion",
				"Updated cm rv=11: bob update a2 by resourceVersion",
				"Deleted cm rv=12: carol delete a3 by delete",
			},
		},
		{
			name: "the delete is the one that succeeded, not the last write nor a failed delete",
			audit: []string{
				line("a1", "create", "alice", "cm", "10", 0, 201),
				line("a2", "delete", "bob", "cm", "", time.Second, 200),
				line("a3", "delete", "mallory", "cm", "", time.Second+time.Millisecond, 404),
				line("a4", "patch", "mallory", "cm", "", time.Second+2*time.Millisecond, 200),
			},
			lines: []watch.Event{objectLine(watch.Deleted, "cm", "", "11", time.Second)},
			want:  []string{"Deleted cm rv=11: bob delete a2 by delete"},
		},
		{
			name: "Metadata level: by time, each write used once, in order",
			audit: []string{
				line("a1", "update", "alice", "cm", "", 0, 200),
				line("a2", "patch", "bob", "cm", "", 100*time.Millisecond, 200),
				line("a3", "update", "carol", "cm", "", 200*time.Millisecond, 409),
			},
			lines: []watch.Event{
				objectLine(watch.Updated, "cm", "1", "2", 10*time.Millisecond),
				objectLine(watch.Updated, "cm", "2", "3", 110*time.Millisecond),
				objectLine(watch.Updated, "cm", "3", "4", 210*time.Millisecond),
			},
			want: []string{
				"Updated cm rv=2: alice update a1 by time",
				"Updated cm rv=3: bob patch a2 by time",
				"Updated cm rv=4: -",
			},
		},
		{
			name:  "a write whose response names another resourceVersion is not matched by time",
			audit: []string{line("a1", "update", "alice", "cm", "99", 0, 200)},
			lines: []watch.Event{objectLine(watch.Updated, "cm", "1", "2", 0)},
			want:  []string{"Updated cm rv=2: -"},
		},
		{
			name:  "another object's write is not this one's",
			audit: []string{line("a1", "create", "alice", "other", "", 0, 201)},
			lines: []watch.Event{objectLine(watch.Added, "cm", "", "5", 0)},
			want:  []string{"Added cm rv=5: -"},
		},
		{
			name: "a server-side apply that creates (patch, 201) made the Added line; the next apply the Updated one",
			audit: []string{
				line("p1", "patch", "bob", "cm", "20", 0, 201),
				line("p2", "patch", "bob", "cm", "21", time.Second, 200),
				line("p3", "patch", "carol", "md", "", 2*time.Second, 201),
			},
			lines: []watch.Event{
				objectLine(watch.Added, "cm", "", "20", 0),
				objectLine(watch.Updated, "cm", "20", "21", time.Second),
				objectLine(watch.Added, "md", "", "30", 2*time.Second),
			},
			want: []string{"Added cm rv=20: bob patch p1 by resourceVersion", "Updated cm rv=21: bob patch p2 by resourceVersion", "Added md rv=30: carol patch p3 by time"},
		},
		{
			name: "deletecollection",
			audit: []string{
				`{"auditID":"c1","stage":"ResponseComplete","verb":"deletecollection","user":{"username":"dora"},"objectRef":{"resource":"configmaps","namespace":"ns"},"responseStatus":{"code":200},"stageTimestamp":"2026-11-27T12:00:00Z"}`,
			},
			lines: []watch.Event{objectLine(watch.Deleted, "a", "", "5", 0), objectLine(watch.Deleted, "b", "", "6", 0)},
			want:  []string{"Deleted a rv=5: dora deletecollection c1 by collection", "Deleted b rv=6: dora deletecollection c1 by collection"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := NewJoiner(DefaultWait, DefaultWindow)
			for _, l := range tt.audit {
				j.Add(mustParse(t, l))
			}
			for _, ev := range tt.lines {
				if !j.Hold(ev, t0) {
					t.Fatalf("%s %s not held", ev.Type, ev.Name)
				}
			}
			got := who(j.Due(t0.Add(DefaultWait), false))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJoinWaits: a line waits for its audit event, up to the wait, and holds its object's later
// lines behind it; a listed object's line is never held.
func TestJoinWaits(t *testing.T) {
	j := NewJoiner(DefaultWait, DefaultWindow)
	listed := objectLine(watch.Added, "old", "", "1", 0)
	listed.Obj.InitialList = true
	if j.Hold(listed, t0) {
		t.Fatal("a listed object's line was held")
	}
	j.Hold(objectLine(watch.Added, "cm", "", "10", 0), t0)
	j.Hold(objectLine(watch.Updated, "cm", "10", "11", 0), t0)
	j.Hold(objectLine(watch.Added, "other", "", "12", 0), t0)
	if got := j.Due(t0.Add(time.Second), false); len(got) != 0 {
		t.Fatalf("released before the audit events or the wait: %v", who(got))
	}
	j.Add(mustParse(t, line("a2", "update", "bob", "cm", "11", 0, 200)))
	if got := j.Due(t0.Add(time.Second), false); len(got) != 0 {
		t.Fatalf("the update went out before its object's create: %v", who(got))
	}
	j.Add(mustParse(t, line("a1", "create", "alice", "cm", "10", 0, 201)))
	got := who(j.Due(t0.Add(time.Second), false))
	want := []string{"Added cm rv=10: alice create a1 by resourceVersion", "Updated cm rv=11: bob update a2 by resourceVersion"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matched (-want +got):\n%s", diff)
	}
	got = who(j.Due(t0.Add(DefaultWait), false))
	if diff := cmp.Diff([]string{"Added other rv=12: -"}, got); diff != "" {
		t.Errorf("after the wait (-want +got):\n%s", diff)
	}
	if j.Held() != 0 {
		t.Errorf("%d lines still held", j.Held())
	}
}

// TestJoinBounded: past maxHeld lines the oldest go out unmatched; past maxWrites the oldest
// writes are forgotten.
func TestJoinBounded(t *testing.T) {
	j := NewJoiner(time.Hour, DefaultWindow)
	for i := range maxHeld + 10 {
		j.Hold(objectLine(watch.Added, fmt.Sprint("cm", i), "", "1", 0), t0)
	}
	if got := j.Due(t0, false); len(got) != 10 {
		t.Errorf("released %d lines over the bound, want 10", len(got))
	}
	e := mustParse(t, line("a", "create", "alice", "w", "1", 0, 201))
	for i := range maxWrites + 5 {
		e.ObjectRef.Name = fmt.Sprint("w", i)
		j.Add(e)
	}
	if len(j.fifo) != maxWrites || len(j.writes) != maxWrites {
		t.Errorf("kept %d writes (%d objects), want %d", len(j.fifo), len(j.writes), maxWrites)
	}
}

// TestParseKeepsNoBodyNorToken: a RequestResponse event's bodies (a Secret's data) and a token
// in the requestURI's query are not in what Parse keeps.
func TestParseKeepsNoBodyNorToken(t *testing.T) {
	l := `{"auditID":"x","stage":"ResponseComplete","verb":"list","level":"RequestResponse","requestURI":"/api/v1/namespaces/ns/secrets?access_token=TOPSECRETTOKEN&limit=500&resourceVersion=0","user":{"username":"u"},"objectRef":{"resource":"secrets","namespace":"ns"},"requestObject":{"data":{"password":"UEFTU1dPUkQ="}},"responseObject":{"kind":"SecretList","metadata":{"resourceVersion":"7"},"items":[{"data":{"password":"UEFTU1dPUkQ="}}]},"responseStatus":{"code":200}}`
	e := mustParse(t, l)
	s := fmt.Sprintf("%+v %+v", *e, *e.ResponseObject)
	for _, secret := range []string{"TOPSECRETTOKEN", "UEFTU1dPUkQ=", "access_token"} {
		if strings.Contains(s, secret) {
			t.Errorf("Parse kept %q: %s", secret, s)
		}
	}
	if e.Path != "/api/v1/namespaces/ns/secrets" || !e.HasResourceVersion || e.Limit != 500 {
		t.Errorf("Path %q, HasResourceVersion %v, Limit %d", e.Path, e.HasResourceVersion, e.Limit)
	}
}
