package audit

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// request is an audit line of a request by user with agent, received at t0+at.
func request(id, stage, verb, user, agent, uri, ns, resource string, at time.Duration, code int) string {
	ts := t0.Add(at).Format(time.RFC3339Nano)
	return fmt.Sprintf(`{"auditID":%q,"stage":%q,"verb":%q,"requestURI":%q,"user":{"username":%q},"userAgent":%q,"objectRef":{"resource":%q,"namespace":%q},"responseStatus":{"code":%d},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
		id, stage, verb, uri, user, agent, resource, ns, code, ts, ts)
}

func TestLoadRanks(t *testing.T) {
	l := NewLoad(10 * time.Second)
	n := 0
	add := func(s string) {
		n++
		l.Add(mustParse(t, s))
	}
	// A poller: 100 GETs a second for 10 seconds.
	for i := range 1000 {
		add(request(fmt.Sprint("p", i), StageResponseComplete, "get", "poller", "poll/1", "/api/v1/namespaces/ns/configmaps/x", "ns", "configmaps", time.Duration(i)*10*time.Millisecond, 200))
	}
	// A relister: a LIST of every namespace's pods from etcd each second, one throttled.
	for i := range 10 {
		code := 200
		if i == 3 {
			code = 429
		}
		add(request(fmt.Sprint("l", i), StageResponseComplete, "list", "system:serviceaccount:kube-system:relister", "relist/2", "/api/v1/pods", "", "pods", time.Duration(i)*time.Second, code))
	}
	// A watch, counted once: at its start, not again at its end.
	add(request("w", StageResponseStarted, "watch", "watcher", "w/1", "/api/v1/pods?watch=true&resourceVersion=5", "", "pods", 0, 200))
	add(request("w", StageResponseComplete, "watch", "watcher", "w/1", "/api/v1/pods?watch=true&resourceVersion=5", "", "pods", 0, 200))
	// A write, and a stage that is not counted.
	add(request("c", StageResponseComplete, "create", "alice", "kubectl/v1", "/api/v1/namespaces/ns/configmaps", "ns", "configmaps", time.Second, 201))
	add(request("r", "RequestReceived", "get", "alice", "kubectl/v1", "/api/v1/namespaces/ns/configmaps/x", "ns", "configmaps", time.Second, 0))

	r := l.Rank()
	if len(r.Clients) != 4 {
		t.Fatalf("clients %+v", r.Clients)
	}
	p := r.Clients[0]
	if p.User != "poller" || p.Requests != 1000 || p.Reads != 1000 || math.Abs(p.Rate-100) > 0.2 {
		t.Errorf("first client %+v, want the poller at 100/s", p)
	}
	rl := r.Clients[1]
	if rl.User != "system:serviceaccount:kube-system:relister" || rl.Requests != 10 || rl.Throttled != 1 {
		t.Errorf("second client %+v, want the relister, one 429", rl)
	}
	if r.Total.Requests != 1012 || r.Total.Writes != 1 || r.Total.Throttled != 1 {
		t.Errorf("total %+v", r.Total)
	}
	if len(r.Heavy) == 0 || r.Heavy[0].Resource != "pods" || !r.Heavy[0].NoRV || !r.Heavy[0].ClusterWide || !r.Heavy[0].Unpaginated {
		t.Errorf("heaviest %+v, want the relister's LIST of all pods from etcd", r.Heavy)
	}
	if r.VerbResources[0].Verb != "get" || r.VerbResources[0].Resource != "configmaps" {
		t.Errorf("first verb %+v", r.VerbResources[0])
	}
	// Ten seconds on, only the newest second's requests are in the window.
	add(request("late", StageResponseComplete, "get", "late", "l/1", "/healthz", "", "", 19*time.Second, 200))
	r = l.Rank()
	if len(r.Clients) != 1 || r.Clients[0].User != "late" || r.VerbResources[0].Resource != "/healthz" {
		t.Errorf("after the window: %+v", r.Clients)
	}
}

// TestLineReaderBounds: a line over MaxLine (in the pieces ctrllog.Follow hands it) is skipped
// with one notice, the line after it read; a line that is no audit event is one notice; the
// notices are bounded and carry nothing of the line.
func TestLineReaderBounds(t *testing.T) {
	var notices []string
	var got []string
	r := &LineReader{Source: "--audit-log f", Notice: func(s string) { notices = append(notices, s) }, Event: func(e *Event) { got = append(got, e.AuditID) }}
	long := []byte(strings.Repeat("x", MaxLine))
	r.Line([]byte(request("a", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200)), t0)
	for range 100 {
		r.Line(long, t0)
	}
	r.Line([]byte(`tail of the long line"}`), t0)
	r.Line([]byte(request("b", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200)), t0)
	r.Line([]byte("\x1b]0;pwned\x07 not json"), t0)
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("events %v, want a,b", got)
	}
	want := []string{
		"--audit-log f: line 2 is longer than 1024 KiB (the bound on one audit line): skipped",
		"--audit-log f: line 4 is not an audit event: invalid character '\\x1b' looking for beginning of value",
	}
	if strings.Join(notices, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices:\n%s\nwant:\n%s", strings.Join(notices, "\n"), strings.Join(want, "\n"))
	}
	for range 10 {
		r.Line([]byte("{}"), t0)
	}
	if len(notices) != maxNotices || !strings.HasSuffix(notices[maxNotices-1], "(further skipped lines are not said)") || r.Skipped != 12 {
		t.Errorf("%d notices, %d skipped: %q", len(notices), r.Skipped, notices)
	}
}

// The join reads writes only: a read is skipped before it is decoded, by the event's first verb
// (the top-level one: the API server writes it before the bodies, where a "verb" key may be).
func TestWritesOnly(t *testing.T) {
	var got []string
	r := &LineReader{Source: "f", Notice: func(s string) { t.Error(s) }, WritesOnly: true, Event: func(e *Event) { got = append(got, e.AuditID) }}
	for _, l := range []string{
		request("r", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200),
		request("w", StageResponseComplete, "create", "u", "", "/x", "", "", 0, 201),
		`{"auditID":"sar","stage":"ResponseComplete","verb":"create","user":{"username":"u"},"requestObject":{"spec":{"resourceAttributes":{"verb":"get"}}}}`,
	} {
		r.Line([]byte(l), t0)
	}
	if strings.Join(got, ",") != "w,sar" {
		t.Errorf("read %v, want w,sar", got)
	}
}
