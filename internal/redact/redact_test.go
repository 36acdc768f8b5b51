package redact

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
)

const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6YTpiIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8080/metrics", "http://127.0.0.1:8080/metrics"},
		{"http://scrapeuser:PASSWORD123@127.0.0.1:8080/ok", "http://scrapeuser:xxxxx@127.0.0.1:8080/ok"},
		{"https://TOKEN123@host/metrics", "https://xxxxx@host/metrics"},
		{"http://h/ok?access_token=QUERYSECRET&x=1", "http://h/ok?access_token=xxxxx&x=1"},
		{"http://h/ok?X-Amz-Signature=abc&api_key=k&page=2", "http://h/ok?X-Amz-Signature=xxxxx&api_key=xxxxx&page=2"},
		{"not a url ?token=abc", "not a url ?token=xxxxx"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The secrets of B1 and B2 in every shape client-go logs them: a raw plain-HTTP request in a
// port-forward tunnel, a curl command, a URL, an error, a header map, a JWT.
func TestTextMasksEverySecret(t *testing.T) {
	secrets := []string{"SECRETmetricstoken0123", "PASSWORD123", "QUERYSECRET", jwt, "c2Nyb"}
	inputs := []string{
		"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer SECRETmetricstoken0123\r\nAccept: */*\r\n\r\n",
		`curl -v -XGET  -H "Authorization: Bearer SECRETmetricstoken0123" 'http://scrapeuser:PASSWORD123@127.0.0.1:1/ok'`,
		`GET http://127.0.0.1:1/ok?access_token=QUERYSECRET 200 OK`,
		`Get "http://u:PASSWORD123@h/x": dial tcp: refused`,
		"token " + jwt + " minted",
		`map[Authorization:[Basic c2Nyb] Accept:[*/*]]`,
		`{"Authorization": "Bearer SECRETmetricstoken0123"}`,
	}
	for _, in := range inputs {
		out := Text(in)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("Text(%q) = %q: still has %q", in, out, s)
			}
		}
	}
	if got := Text("GET /metrics HTTP/1.1 200 OK in 3 ms"); got != "GET /metrics HTTP/1.1 200 OK in 3 ms" {
		t.Errorf("plain text changed: %q", got)
	}
}

func TestLogFilter(t *testing.T) {
	raw := []byte("GET /ok HTTP/1.1\r\nAuthorization: Bearer SECRETmetricstoken0123\r\n\r\n")
	msg, kv := LogFilter{}.FilterS("Tunneling connection write", []any{"length", len(raw), "data", raw})
	if msg != "Tunneling connection write" || kv[0] != "length" || kv[1] != len(raw) || kv[3] != "[66 bytes, not logged]" {
		t.Errorf("FilterS = %q %v", msg, kv)
	}
	u, _ := url.Parse("http://a:PASSWORD123@h/?token=QUERYSECRET")
	_, args := LogFilter{}.FilterF("%s %v %v", []any{"Bearer " + jwt, u, errors.New(`Get "http://u:PASSWORD123@h/x": refused`)})
	var b bytes.Buffer
	w := Writer{W: &b}
	for _, a := range append(args, LogFilter{}.Filter([]any{jwt})...) {
		if _, err := w.Write([]byte(Value(a).(string) + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{jwt, "PASSWORD123", "QUERYSECRET"} {
		if strings.Contains(b.String(), s) {
			t.Errorf("%q left in %q", s, b.String())
		}
	}
}
