package cmd

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// fakeServer is an API server that answers /version with gitVersion, after delay.
type fakeServer struct {
	*httptest.Server
	requests atomic.Int32
}

func newFakeServer(t *testing.T, gitVersion string, block <-chan struct{}) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if block != nil {
			select {
			case <-block:
			case <-r.Context().Done():
				return
			}
		}
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"` + gitVersion + `","platform":"linux/amd64"}`))
	}))
	t.Cleanup(f.Close)
	return f
}

// runVersion runs `kubectl informer version args...` against server (none if "") with no
// kubeconfig (an empty one), and returns stdout, stderr and the error.
func runVersion(t *testing.T, server string, requestTimeout string, args ...string) (string, string, error) {
	t.Helper()
	cf := genericclioptions.NewConfigFlags(false)
	empty := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cf.KubeConfig = &empty
	if server != "" {
		*cf.APIServer = server
	}
	if requestTimeout != "" {
		*cf.Timeout = requestTimeout
	}
	var out, errOut bytes.Buffer
	cmd := NewCmdVersion(cf, genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func setBuildInfo(t *testing.T, version, commit, date string) {
	t.Helper()
	oldV, oldC, oldD := Version, Commit, Date
	Version, Commit, Date = version, commit, date
	t.Cleanup(func() { Version, Commit, Date = oldV, oldC, oldD })
}

func decodeVersion(t *testing.T, out string) VersionInfo {
	t.Helper()
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("want one JSON line, got %q", out)
	}
	var v VersionInfo
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	return v
}

func TestVersionClientJSON(t *testing.T) {
	setBuildInfo(t, "v1.2.3-test", "abc1234", "2026-01-02T03:04:05Z")
	srv := newFakeServer(t, "v1.37.1", nil)
	out, errOut, err := runVersion(t, srv.URL, "", "--client", "-o", "json")
	if err != nil {
		t.Fatalf("version: %v (stderr %q)", err, errOut)
	}
	v := decodeVersion(t, out)
	want := VersionInfo{
		Version: "v1.2.3-test", Commit: "abc1234", Date: "2026-01-02T03:04:05Z",
		ClientGoVersion: v.ClientGoVersion, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if v != want {
		t.Errorf("got %+v\nwant %+v", v, want)
	}
	// A test binary's build info lists no dependencies; test/dist checks the released binary's.
	if v.ClientGoVersion != "unknown" && !strings.HasPrefix(v.ClientGoVersion, "v0.") {
		t.Errorf("clientGoVersion = %q, want client-go's module version", v.ClientGoVersion)
	}
	if n := srv.requests.Load(); n != 0 {
		t.Errorf("--client made %d requests to the server", n)
	}
	if errOut != "" {
		t.Errorf("stderr: %q", errOut)
	}
	if strings.Contains(out, "serverVersion") {
		t.Errorf("--client output has serverVersion: %s", out)
	}
}

func TestVersionWithServer(t *testing.T) {
	setBuildInfo(t, "v0.1.0", "abc1234", "2026-01-02T03:04:05Z")
	srv := newFakeServer(t, "v1.37.1-fake", nil)

	out, errOut, err := runVersion(t, srv.URL, "", "-o", "json")
	if err != nil {
		t.Fatalf("version -o json: %v (stderr %q)", err, errOut)
	}
	if v := decodeVersion(t, out); v.ServerVersion != "v1.37.1-fake" || v.Version != "v0.1.0" {
		t.Errorf("got %+v, want serverVersion v1.37.1-fake", v)
	}

	out, errOut, err = runVersion(t, srv.URL, "")
	if err != nil {
		t.Fatalf("version: %v (stderr %q)", err, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 ||
		lines[0] != "kubectl-informer v0.1.0 (commit abc1234, built 2026-01-02T03:04:05Z)" ||
		!strings.HasPrefix(lines[1], "client-go ") || !strings.HasSuffix(lines[1], ", "+runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH) ||
		lines[2] != "server v1.37.1-fake" {
		t.Errorf("text output:\n%s", out)
	}
	if errOut != "" {
		t.Errorf("stderr: %q", errOut)
	}
}

func TestVersionServerUnreachable(t *testing.T) {
	setBuildInfo(t, "v0.1.0", "abc1234", "2026-01-02T03:04:05Z")
	block := make(chan struct{})
	srv := newFakeServer(t, "v1.37.1", block)
	t.Cleanup(func() { close(block) }) // runs before srv.Close

	for _, tc := range []struct {
		name           string
		defaultTimeout time.Duration
		requestTimeout string
	}{
		{"default timeout", 200 * time.Millisecond, ""},
		{"--request-timeout", time.Hour, "300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := serverVersionTimeout
			serverVersionTimeout = tc.defaultTimeout
			t.Cleanup(func() { serverVersionTimeout = old })

			start := time.Now()
			out, errOut, err := runVersion(t, srv.URL, tc.requestTimeout)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("version took %v with a server that never answers", took)
			}
			if err != nil {
				t.Fatalf("version failed: %v; the plugin's own version should still be printed", err)
			}
			if !strings.HasPrefix(out, "kubectl-informer v0.1.0 ") || strings.Contains(out, "server ") {
				t.Errorf("stdout:\n%s", out)
			}
			if !strings.HasPrefix(errOut, "server version unavailable: ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr: %q, want one line saying the server version is unavailable", errOut)
			}
		})
	}

	// The JSON form stays one parsable line, without serverVersion, and nothing on stderr.
	old := serverVersionTimeout
	serverVersionTimeout = 200 * time.Millisecond
	t.Cleanup(func() { serverVersionTimeout = old })
	out, errOut, err := runVersion(t, srv.URL, "", "-o", "json")
	if err != nil || errOut != "" {
		t.Fatalf("version -o json: %v, stderr %q", err, errOut)
	}
	if v := decodeVersion(t, out); v.ServerVersion != "" {
		t.Errorf("serverVersion = %q from a server that never answered", v.ServerVersion)
	}
}

func TestVersionNoKubeconfig(t *testing.T) {
	out, errOut, err := runVersion(t, "", "")
	if err != nil {
		t.Fatalf("version without a kubeconfig: %v", err)
	}
	if !strings.HasPrefix(out, "kubectl-informer ") || !strings.HasPrefix(errOut, "server version unavailable: ") {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
}

func TestVersionRejects(t *testing.T) {
	for _, args := range [][]string{{"-o", "yaml"}, {"extra"}} {
		if _, _, err := runVersion(t, "", "", append(args, "--client")...); err == nil {
			t.Errorf("version %v: no error", args)
		}
	}
}

// B11: a hostile (or intercepted) API server's gitVersion reaches the terminal escaped.
func TestVersionEscapesServerText(t *testing.T) {
	srv := newFakeServer(t, `v1.37.1\u001b]52;c;cHduZWQ=\u0007\u001b]0;TITLE\u0007\u001b[2J\r`, nil)
	out, errOut, err := runVersion(t, srv.URL, "")
	if err != nil {
		t.Fatalf("version: %v (stderr %q)", err, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("raw control bytes on stdout: %q", out)
	}
	if !strings.Contains(out, "server v1.37.1") {
		t.Errorf("no server line: %q", out)
	}
}
