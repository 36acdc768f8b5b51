package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// B1 and B2 of the hostile run: at -v=10, client-go logs every byte a port-forward tunnel
// carries, which for an http:// --metrics-from target is the scrape request in plain text, its
// Authorization header included, and every request's full URL. Neither a token file's token, nor
// a minted service account token, nor a password or token in a --metrics-url may reach stdout,
// stderr or the recording.
func TestTunnelLogsNoToken(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	const podPort, deploy = 8080, "plain-manager"
	_, op := operatorPod(t, c, ns, testenv.OperatorOptions{Namespace: ns, InsecureMetrics: true}, podPort, deploy)
	newServiceAccount(t, c, ns, "scraper")
	grantMetrics(t, c, ns, "scraper")
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "w1"})
	const secret = "SECRETmetricstoken0123456789"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostPort := strings.TrimPrefix(strings.TrimSuffix(op.MetricsURL, "/metrics"), "http://")
	from := "http://deploy/" + deploy + fmt.Sprintf(":%d/metrics", podPort)
	for _, run := range []struct {
		name string
		args []string
	}{
		{"token file", []string{"--metrics-token-file", tokenFile,
			"--metrics-url", "http://scrapeuser:PASSWORD123@" + hostPort + "/metrics?access_token=QUERYSECRET"}},
		{"service account", []string{"--metrics-serviceaccount", ns + "/scraper"}},
	} {
		t.Run(strings.ReplaceAll(run.name, " ", "_"), func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.ndjson")
			args := append([]string{"watch", "widgets", "-n", ns, "-o", "json", "-v=10", "--record", rec,
				"--metrics-from", from, "--metrics-interval", "2s"}, run.args...)
			p := c.RunPlugin(t, ctx, args...)
			awaitSeen(t, p, await, "the widget queue through "+from, func(m map[string]any) bool {
				f, _ := m["from"].(string)
				return m["type"] == "ControllerQueue" && strings.HasPrefix(f, from)
			})
			if run.name == "token file" {
				awaitSeen(t, p, await, "a ControllerQueue line of the --metrics-url", func(m map[string]any) bool {
					u, _ := m["url"].(string)
					return m["type"] == "ControllerQueue" && strings.Contains(u, hostPort)
				})
			}
			stderr := stopAndCheckNoToken(t, p, rec, secret, "PASSWORD123", "QUERYSECRET")
			// The proof that the bytes went through the tunnel and its logging: the test is
			// void if client-go stops logging them (or forwards without the WebSocket tunnel).
			if !strings.Contains(stderr, "Tunneling connection write") {
				t.Errorf("no tunnel log lines at -v=10 (stderr %d bytes): the test no longer exercises the tunnel", len(stderr))
			}
		})
	}
}

// B4: a failed write to stdout that is not a reader going away (a full disk, a file size limit)
// is one line on stderr and exit 1, for human and -o json output, never a silent exit 0 with
// the output cut short.
func TestStdoutFullExitsOne(t *testing.T) {
	ns := newNamespace(t, cluster)
	ctx := context.Background()
	for i := range 20 {
		if _, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)},
			Data:       map[string]string{"k": strings.Repeat("v", 300)},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	runs := []struct {
		name, shell, want string
	}{
		{"human to /dev/full", "exec kubectl informer watch cm -n " + ns + " --timeout 60s > /dev/full", "no space left on device"},
		{"json to /dev/full", "exec kubectl informer watch cm -n " + ns + " -o json --timeout 60s > /dev/full", "no space left on device"},
		// 20 ConfigMaps of -o json are over 8 KiB: past the limit, the write fails with EFBIG.
		{"json past ulimit -f", "ulimit -f 4; exec kubectl informer watch cm -n " + ns + " -o json --timeout 60s > " + filepath.Join(t.TempDir(), "out"), "file too large"},
	}
	for _, run := range runs {
		t.Run(strings.ReplaceAll(run.name, " ", "_"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", run.shell)
			cmd.Env = cluster.Environ()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("still running after 2 minutes (the write error did not end the run); stderr: %s", stderr.String())
			}
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err == nil {
				code = 0
			}
			if code != 1 || !strings.Contains(stderr.String(), "error: stdout: ") || !strings.Contains(stderr.String(), run.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and one error line saying %q", code, stderr.String(), run.want)
			}
		})
	}
}
