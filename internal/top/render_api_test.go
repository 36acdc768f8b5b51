package top

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
)

// The API tables of --audit-log: a user name and agent made to hurt a terminal are escaped, and
// a token in a request's query (a non-resource path, a LIST) is in no table nor JSON line.
func TestAPITablesEscapeAndRedact(t *testing.T) {
	lines := []string{
		`{"auditID":"1","stage":"ResponseComplete","verb":"get","requestURI":"/healthz?access_token=TOPSECRET","user":{"username":"evil\u001b]0;TITLE\u0007"},"userAgent":"ua\u001b[2J\r","responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-27T12:00:00Z"}`,
		`{"auditID":"3","stage":"ResponseComplete","verb":"get","requestURI":"/proxy/eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.TOPSECRETSIG","user":{"username":"u"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-27T12:00:00Z"}`,
		`{"auditID":"2","stage":"ResponseComplete","verb":"list","requestURI":"/api/v1/secrets?token=TOPSECRET","user":{"username":"system:serviceaccount:kube-system:relister"},"objectRef":{"resource":"secrets"},"responseStatus":{"code":429},"requestReceivedTimestamp":"2026-11-27T12:00:00Z"}`,
	}
	l := audit.NewLoad(time.Minute)
	for _, s := range lines {
		e, err := audit.Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		l.Add(&e)
	}
	a := l.Rank()
	r := Ranking{At: time.Now(), Window: time.Minute, API: &a}
	var text, js bytes.Buffer
	if err := WriteAPIText(&text, r.API, 0); err != nil {
		t.Fatal(err)
	}
	if err := WriteAPIJSON(&js, r, 0, true); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String()} {
		if strings.Contains(out, "TOPSECRET") {
			t.Errorf("%s output has the token:\n%s", name, out)
		}
		if i := strings.IndexAny(out, "\x1b\x07\r"); i >= 0 {
			t.Errorf("%s output has a raw control byte: %q", name, out)
		}
	}
	for _, want := range []string{"sa:kube-system/relister", "/healthz", "costliest LISTs", "from etcd (no resourceVersion), all namespaces, unpaginated"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	types := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		types[m["type"].(string)]++
	}
	if types["TopClient"] != 3 || types["TopVerb"] != 3 || types["TopHeavyList"] != 1 {
		t.Errorf("JSON lines by type: %v", types)
	}
}
