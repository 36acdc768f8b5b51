package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runPluginEnv runs `kubectl informer args...` with the cluster's environment but KUBECONFIG
// set to kubeconfig ("" leaves it out).
func runPluginEnv(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"informer"}, args...)...)
	for _, kv := range cluster.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl informer %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// A KUBECONFIG naming files that do not exist is an error, not a silent fall back to
// localhost:8080; a missing --kubeconfig fails in kubectl's words.
func TestMissingKubeconfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, env string
		args      []string
		want      string
	}{
		{"KUBECONFIG", dir + "/nope", []string{"watch", "cm"},
			`error: kubeconfig file "` + dir + `/nope" does not exist (named by KUBECONFIG)`},
		{"KUBECONFIG, several", dir + "/a:" + dir + "/b", []string{"watch", "cm"},
			`error: kubeconfig files "` + dir + `/a", "` + dir + `/b" do not exist (named by KUBECONFIG)`},
		{"--kubeconfig", "", []string{"watch", "cm", "--kubeconfig", dir + "/nope"},
			`error: stat ` + dir + `/nope: no such file or directory`},
		{"--kubeconfig wins over KUBECONFIG", dir + "/nope", []string{"watch", "cm", "--kubeconfig", dir + "/other"},
			`error: stat ` + dir + `/other: no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPluginEnv(t, tt.env, tt.args...)
			if r.code != 1 || r.stderr != tt.want+"\n" || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
	// One existing file among missing ones is an ordinary KUBECONFIG list.
	// Its Synced line is awaited, not expected within a --timeout: a loaded machine is slow.
	p := cluster.RunPluginEnv(t, context.Background(), dir+"/nope:"+cluster.KubeconfigPath, "watch", "cm", "-n", "default", "--no-summary", "-o", "json")
	p.AwaitJSON(t, await, is("Synced", ""))
	p.Stop(t)
	// replay never needs a kubeconfig.
	r := runPluginEnv(t, dir+"/nope", "replay", "../../pkg/replay/testdata/configmaps.ndjson", "--no-summary")
	if r.code != 0 {
		t.Errorf("replay with a missing KUBECONFIG: exit %d, stderr %q", r.code, r.stderr)
	}
}

// `watch deploy/nosuch`: the Synced line says the object does not exist (yet), and the watch
// goes on until it does.
func TestNamedObjectMissing(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	p := cluster.RunPlugin(t, ctx, "watch", "deploy/web", "-n", ns, "-o", "json")
	human := cluster.RunPlugin(t, ctx, "watch", "deploy", "web", "-n", ns, "--color", "never")
	synced := p.AwaitJSON(t, await, is("Synced", ""))
	wantField(t, synced, "items", float64(0))
	if nf, _ := synced["notFound"].(map[string]any); nf["name"] != "web" || nf["namespace"] != ns {
		t.Errorf("Synced line: notFound = %v, want {namespace: %s, name: web}", synced["notFound"], ns)
	}
	line := awaitLine(t, human, "Synced")
	if want := `deployments.apps "web" not found in namespace "` + ns + `" (yet): waiting for it`; !strings.Contains(line, want) {
		t.Errorf("human Synced line %q lacks %q", line, want)
	}
	if _, err := cluster.Clientset.AppsV1().Deployments(ns).Create(ctx, deployment(ns, "web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, is("Added", "web"))
	awaitLine(t, human, ns+"/web")

	// An object that exists: no notFound.
	q := cluster.RunPlugin(t, ctx, "watch", "deploy/web", "-n", ns, "-o", "json")
	synced = q.AwaitJSON(t, await, is("Synced", ""))
	if _, ok := synced["notFound"]; ok || synced["items"] != float64(1) {
		t.Errorf("Synced line of an existing object: %v", synced)
	}
}

// A user forbidden on several of the watched resources is told about every one of them, one
// line each, as kubectl get does.
func TestForbiddenSeveralResources(t *testing.T) {
	ns := newNamespace(t, cluster)
	kc := userKubeconfig(t, cluster, "viewer-cm")
	grantReadConfigMaps(t, cluster, ns, "viewer-cm")
	r := runPlugin(t, cluster, "watch", "deploy,cm,rs,pods", "-n", ns, "--kubeconfig", kc)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("stderr:\n%s", r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 3 {
		t.Errorf("stderr has %d lines, want one per forbidden resource:\n%s", len(lines), r.stderr)
	}
	for _, res := range []string{"deployments.apps", "replicasets.apps", "pods"} {
		if !regexp.MustCompile(`(?m)^error: cannot (list|watch) `+regexp.QuoteMeta(res+` in namespace "`+ns+`"`)).MatchString(r.stderr) ||
			!strings.Contains(r.stderr, "kubectl auth can-i list "+res+" -n "+ns) {
			t.Errorf("stderr does not name %s as forbidden:\n%s", res, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "configmaps") {
		t.Errorf("stderr names configmaps, which the user may read:\n%s", r.stderr)
	}
}
