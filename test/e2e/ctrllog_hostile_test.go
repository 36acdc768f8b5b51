//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// A FIFO as --controller-logs (HOSTILE-CASES-2 F4) does not hold the run: with no writer,
// --timeout ends it with its summary and exit 0; with a writer that wrote a reconcile and went
// silent, SIGTERM does. Both runs were alive until SIGKILL, with no summary.
func TestControllerLogsFIFOHonoursTimeoutAndSignals(t *testing.T) {
	ns := newNamespace(t, cluster)
	ctx := context.Background()
	dir := t.TempDir()
	fifo := func(name string) string {
		path := filepath.Join(dir, name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ended := func(p *testenv.PluginRun, what string) {
		t.Helper()
		select {
		case <-p.Done():
		case <-time.After(await):
			t.Fatalf("%s: the run was still going %s later", what, await)
		}
		if code, err := p.Wait(); code != 0 || err != nil {
			t.Fatalf("%s: exit %d, %v; stderr:\n%s", what, code, err, p.Stderr())
		}
		if !strings.Contains(p.Stderr(), "summary after") {
			t.Errorf("%s: no summary on stderr:\n%s", what, p.Stderr())
		}
	}
	// No writer at all: --timeout.
	p := cluster.RunPlugin(t, ctx, "watch", "configmaps", "-n", ns, "-o", "json", "--controller-logs", fifo("none.fifo"), "--timeout", "3s")
	ended(p, "--timeout with no writer")

	// A writer that wrote one reconcile and stays silent: SIGTERM.
	path := fifo("silent.fifo")
	p = cluster.RunPlugin(t, ctx, "watch", "configmaps", "-n", ns, "-o", "json", "--controller-logs", path)
	w, err := os.OpenFile(path, os.O_WRONLY, 0) // opened once the plugin reads it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := fmt.Sprintf(`{"ts":%q,"level":"info","msg":"Reconcile successful","controller":"fifo","controllerKind":"ConfigMap","name":"plain","namespace":%q,"reconcileID":"f1"}`+"\n",
		time.Now().UTC().Format(time.RFC3339Nano), ns)
	if _, err := w.WriteString(line); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "ControllerReconcile" && m["reconcileID"] == "f1" })
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ended(p, "SIGTERM with a silent writer")
}

// Credentials in a controller's log lines (HOSTILE-CASES-2 F8: gen_logs.py's esc.log, a bearer
// token, a JWT, a URL password and a query token in its errors, controller name and
// reconcileID) are in no output: not in stdout's ControllerReconcile lines, not on stderr, not
// in the recording (which replay and report read).
func TestControllerLogsRedactCredentials(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06ZGVmYXVsdCJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
	ns := newNamespace(t, cluster)
	ctx := context.Background()
	dir := t.TempDir()
	log, rec := filepath.Join(dir, "esc.log"), filepath.Join(dir, "esc.ndjson")
	now := time.Now().UTC()
	var b strings.Builder
	for i := range 3 {
		base := map[string]any{"ts": now.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano), "controller": "ctl Bearer SECRETctl",
			"controllerKind": "ConfigMap", "name": "plain", "namespace": ns, "reconcileID": fmt.Sprintf("rid-%d?token=SECRETid", i)}
		base["level"], base["msg"] = "error", "Reconciler error"
		base["error"] = "boom\u001b]0;T\u0007 Authorization: Bearer SECRETbearer123 token=" + jwt + " https://user:PASSWORD123@host/x?access_token=QSECRET"
		l, err := json.Marshal(base)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(log, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p := cluster.RunPlugin(t, ctx, "watch", "configmaps", "-n", ns, "-o", "json", "--controller-logs", log, "--record", rec)
	for i := range 3 {
		p.AwaitJSON(t, await, func(m map[string]any) bool {
			id, _ := m["reconcileID"].(string)
			return m["type"] == "ControllerReconcile" && strings.HasPrefix(id, fmt.Sprintf("rid-%d?", i))
		})
	}
	stderr := p.Stop(t)
	recorded, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	for _, l := range p.All() {
		stdout.Write(l)
		stdout.WriteByte('\n')
	}
	for what, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr, "the recording": string(recorded)} {
		for _, s := range []string{"SECRETbearer123", jwt[:40], "PASSWORD123", "QSECRET", "SECRETctl", "SECRETid"} {
			if strings.Contains(out, s) {
				t.Errorf("%q in %s", s, what)
			}
		}
	}
	if !strings.Contains(string(recorded), "Bearer xxxxx") {
		t.Errorf("the recording has no masked error: %s", recorded)
	}
}
