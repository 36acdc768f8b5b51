package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// findChange returns the `changes` entry with path, or nil.
func findChange(line map[string]any, path string) map[string]any {
	changes, _ := line["changes"].([]any)
	for _, c := range changes {
		if m, _ := c.(map[string]any); m["path"] == path {
			return m
		}
	}
	return nil
}

func managerNames(line map[string]any) []string {
	var out []string
	managers, _ := line["managers"].([]any)
	for _, m := range managers {
		mm, _ := m.(map[string]any)
		out = append(out, mm["manager"].(string)+"/"+mm["operation"].(string)+"/"+mm["subresource"].(string))
	}
	return out
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// A patch made with a field manager: the Updated line names the manager and the changed
// fields with their old and new values, in JSON and in human output.
func TestDisplayManagersAndChanges(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, configMap(ns, "cfg", map[string]string{"key": "v1", "gone": "x"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	js := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--diff")
	human := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "--diff", "--color", "never", "--timestamps", "none", "--no-headers")
	js.AwaitJSON(t, await, is("Synced", ""))
	awaitLine(t, human, "cache synced")

	patched, err := cms.Patch(ctx, "cfg", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"app":"web"}},"data":{"key":"v2","gone":null}}`),
		metav1.PatchOptions{FieldManager: "my-controller"})
	if err != nil {
		t.Fatal(err)
	}
	updated := js.AwaitJSON(t, await, is("Updated", "cfg"))
	wantField(t, updated, "resourceVersion", patched.ResourceVersion)
	if got := managerNames(updated); len(got) != 1 || got[0] != "my-controller/Update/" {
		t.Errorf("managers = %v, want [my-controller/Update/]", updated["managers"])
	}
	if c := findChange(updated, "data.key"); c == nil || c["old"] != "v1" || c["new"] != "v2" {
		t.Errorf("data.key change = %v (changes: %v)", c, updated["changes"])
	}
	if c := findChange(updated, "metadata.labels.app"); c == nil || c["new"] != "web" {
		t.Errorf("metadata.labels.app change = %v", c)
	} else if _, has := c["old"]; has {
		t.Errorf("an added field carries old: %v", c)
	}
	if c := findChange(updated, "data.gone"); c == nil || c["old"] != "x" {
		t.Errorf("data.gone change = %v", c)
	} else if _, has := c["new"]; has {
		t.Errorf("a removed field carries new: %v", c)
	}
	for _, never := range []string{"metadata.resourceVersion", "metadata.managedFields"} {
		if c := findChange(updated, never); c != nil {
			t.Errorf("changes hold %s: %v", never, c)
		}
	}
	// Three short changes fit on the line.
	line := awaitLine(t, human, "→"+patched.ResourceVersion+" ")
	for _, want := range []string{"Updated     configmaps  " + ns + "/cfg", "by my-controller (Update)",
		`data.gone: "x" → (none); data.key: "v1" → "v2"; metadata.labels.app: (none) → "web"`} {
		if !strings.HasPrefix(line, "Updated") || !strings.Contains(line, want) {
			t.Errorf("human update lacks %q: %q", want, line)
		}
	}

	// Server-side apply: the Apply operation.
	applied, err := cms.Patch(ctx, "cfg", types.ApplyPatchType,
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"applied":"yes"}}`),
		metav1.PatchOptions{FieldManager: "my-applier"})
	if err != nil {
		t.Fatal(err)
	}
	updated = js.AwaitJSON(t, await, is("Updated", "cfg"))
	wantField(t, updated, "resourceVersion", applied.ResourceVersion)
	if got := managerNames(updated); len(got) != 1 || got[0] != "my-applier/Apply/" {
		t.Errorf("managers = %v, want [my-applier/Apply/]", updated["managers"])
	}
	if c := findChange(updated, "data.applied"); c == nil || c["new"] != "yes" {
		t.Errorf("data.applied change = %v", updated["changes"])
	}
}

// A deployment's container image: the path names the container by its name.
func TestDisplayKeyedListPath(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	deploys := cluster.Clientset.AppsV1().Deployments(ns)
	if _, err := deploys.Create(ctx, deployment(ns, "web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := cluster.RunPlugin(t, ctx, "watch", "deploy/web", "-n", ns, "-o", "json", "--diff=full")
	p.AwaitJSON(t, await, is("Synced", ""))
	if _, err := deploys.Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.37"}]}}}}`),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	updated := p.AwaitJSON(t, await, is("Updated", "web"))
	if c := findChange(updated, "spec.template.spec.containers[name=c].image"); c == nil || c["old"] != "busybox" || c["new"] != "busybox:1.37" {
		t.Errorf("image change = %v (changes: %v)", c, updated["changes"])
	}
	if c := findChange(updated, "spec.replicas"); c == nil || c["old"] != float64(1) || c["new"] != float64(2) {
		t.Errorf("replicas change = %v", c)
	}
	if c := findChange(updated, "metadata.generation"); c == nil {
		t.Errorf("no metadata.generation change: %v", updated["changes"])
	}
	diff, _ := updated["diff"].(string)
	if !strings.Contains(diff, "-  replicas: 1\n+  replicas: 2") || !strings.Contains(diff, "image: busybox:1.37") {
		t.Errorf("--diff=full diff:\n%s", diff)
	}
	if got := managerNames(updated); len(got) != 1 || got[0] != "kubectl-edit/Update/" {
		t.Errorf("managers = %v", updated["managers"])
	}
}

// Two managers taking turns at one object: one HotLoop line naming both and the field.
func TestDisplayHotLoop(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, configMap(ns, "fought", map[string]string{"mode": "a"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--hot-loop-window", "5m")
	p.AwaitJSON(t, await, is("Synced", ""))
	for i := range 6 {
		manager, mode := "ctl-a", "a"
		if i%2 == 0 {
			manager, mode = "ctl-b", "b"
		}
		if _, err := cms.Patch(ctx, "fought", types.MergePatchType, []byte(`{"data":{"mode":"`+mode+`"}}`),
			metav1.PatchOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	// A later event: everything about "fought" is printed before it.
	if _, err := cms.Create(ctx, configMap(ns, "sentinel", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hot := p.AwaitJSON(t, await, is("HotLoop", "fought"))
	wantField(t, hot, "key", ns+"/fought")
	wantField(t, hot, "reason", "alternating")
	wantField(t, hot, "windowSeconds", float64(300))
	if m, _ := hot["managers"].([]any); len(m) != 2 || m[0] != "ctl-b" || m[1] != "ctl-a" {
		t.Errorf("managers = %v, want [ctl-b ctl-a]", hot["managers"])
	}
	if f, _ := hot["fields"].([]any); len(f) != 1 || f[0] != "data.mode" {
		t.Errorf("fields = %v, want [data.mode]", hot["fields"])
	}
	p.AwaitJSON(t, await, is("Added", "sentinel"))
	// The fifth update made it a hot loop; the sixth, in the same episode, gives no report.
	updates, reports := 0, 0
	for _, m := range p.JSON() {
		switch {
		case is("Updated", "fought")(m):
			updates++
			if got := managerNames(m); len(got) != 1 {
				t.Errorf("update %d names %v", updates, got)
			}
		case is("HotLoop", "fought")(m):
			reports++
			if updates != 5 {
				t.Errorf("HotLoop after update %d, want 5", updates)
			}
		}
	}
	if updates != 6 || reports != 1 {
		t.Errorf("%d updates, %d HotLoop lines; want 6 and 1", updates, reports)
	}
}

// Several resources in one stream, secrets redacted in every form, and the name filter.
func TestDisplayMultiResourceSecretsAndName(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	secrets := cluster.Clientset.CoreV1().Secrets(ns)
	p := cluster.RunPlugin(t, ctx, "watch", "cm,secrets", "-n", ns, "-o", "json", "--diff=full")
	named := cluster.RunPlugin(t, ctx, "watch", "cm", "keep", "-n", ns, "-o", "json")
	slashed := cluster.RunPlugin(t, ctx, "watch", "secrets/keep", "-n", ns, "-o", "json")
	human := cluster.RunPlugin(t, ctx, "watch", "secrets", "-n", ns, "-o", "wide", "--diff", "--color", "always")
	tmpl := cluster.RunPlugin(t, ctx, "watch", "secrets", "-n", ns, "-o", `jsonpath={.type} {.object.data.password} {.changes[*].new}{"\n"}`, "--diff")
	info := p.AwaitJSON(t, await, is("Informer", ""))
	if res, _ := info["resources"].([]any); len(res) != 2 {
		t.Errorf("Informer resources = %v, want configmaps and secrets", info["resources"])
	}
	for range 2 {
		p.AwaitJSON(t, await, is("Synced", ""))
	}
	named.AwaitJSON(t, await, is("Synced", ""))
	slashed.AwaitJSON(t, await, is("Synced", ""))
	awaitLine(t, human, "cache synced")
	awaitLine(t, tmpl, "Synced")

	const pw1, pw2 = "hunter2-first", "hunter2-second"
	for _, name := range []string{"other", "keep"} {
		if _, err := cms.Create(ctx, configMap(ns, name, map[string]string{"k": name}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"password": pw1}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := secrets.Patch(ctx, "keep", types.MergePatchType, []byte(`{"stringData":{"password":"`+pw2+`"}}`), metav1.PatchOptions{FieldManager: "rotator"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "keep", types.MergePatchType, []byte(`{"data":{"k":"changed"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// The multi-resource stream: both kinds, same names told apart by resource.
	isRes := func(typ, resource, name string) func(map[string]any) bool {
		return func(m map[string]any) bool { return is(typ, name)(m) && m["resource"] == resource }
	}
	// Each resource has its own informer: their lines interleave in any order.
	got := awaitAll(t, p, isRes("Added", "configmaps", "other"), isRes("Added", "secrets", "keep"),
		isRes("Updated", "secrets", "keep"), isRes("Updated", "configmaps", "keep"))
	upd := got[2]
	c := findChange(upd, "data.password")
	if c == nil || !strings.HasPrefix(c["old"].(string), "<redacted: ") || !strings.HasPrefix(c["new"].(string), "<redacted: ") {
		t.Errorf("secret change not redacted: %v", upd["changes"])
	}
	if d, _ := upd["diff"].(string); !strings.Contains(d, "changed>") {
		t.Errorf("full diff does not show the value changed:\n%s", d)
	}
	if got := managerNames(upd); len(got) != 1 || got[0] != "rotator/Update/" {
		t.Errorf("managers = %v", upd["managers"])
	}

	// NAME and RESOURCE/NAME: only that object.
	named.AwaitJSON(t, await, is("Updated", "keep"))
	slashed.AwaitJSON(t, await, is("Updated", "keep"))
	for _, run := range []*testenv.PluginRun{named, slashed} {
		for _, l := range run.All() {
			if bytes.Contains(l, []byte(`"name":"other"`)) {
				t.Errorf("the name filter let another object through: %s", l)
			}
		}
	}
	awaitLine(t, human, "by rotator (Update)")
	awaitLine(t, tmpl, "Updated <redacted: ")

	// No form shows a secret value, in base64 or not.
	for _, run := range []*testenv.PluginRun{p, slashed, human, tmpl} {
		run.Stop(t)
		out := bytes.Join(run.All(), []byte("\n"))
		for _, leak := range []string{pw1, pw2, base64.StdEncoding.EncodeToString([]byte(pw1)), base64.StdEncoding.EncodeToString([]byte(pw2))} {
			if bytes.Contains(out, []byte(leak)) {
				t.Errorf("output leaks %q:\n%s", leak, out)
			}
		}
		if bytes.ContainsAny(out, "\x07") || bytes.Contains(out, []byte("\x1b]")) {
			t.Errorf("OSC or BEL in the output")
		}
	}
}

// awaitAll waits for one line matching each predicate, in any order, and returns them in the
// predicates' order.
func awaitAll(t *testing.T, p *testenv.PluginRun, preds ...func(map[string]any) bool) []map[string]any {
	t.Helper()
	found := make([]map[string]any, len(preds))
	for missing := len(preds); missing > 0; missing-- {
		p.AwaitJSON(t, await, func(m map[string]any) bool {
			for i, pred := range preds {
				if found[i] == nil && pred(m) {
					found[i] = m
					return true
				}
			}
			return false
		})
	}
	return found
}

// -o yaml: a stream of YAML documents, one per event, each the JSON record.
func TestDisplayYAML(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "yaml", "--diff")
	awaitLine(t, p, "type: Synced")
	if _, err := cms.Create(ctx, configMap(ns, "y", map[string]string{"k": "a"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "y", types.MergePatchType, []byte(`{"data":{"k":"b"}}`), metav1.PatchOptions{FieldManager: "yaml-test"}); err != nil {
		t.Fatal(err)
	}
	awaitLine(t, p, "type: Updated")
	p.Stop(t)
	dec := yaml.NewDecoder(bytes.NewReader(bytes.Join(p.All(), []byte("\n"))))
	var kinds []string
	var updated map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("stdout is not a YAML stream: %v", err)
		}
		if doc["time"] == nil || doc["type"] == nil {
			t.Errorf("document lacks time or type: %v", doc)
		}
		kinds = append(kinds, doc["type"].(string))
		if doc["type"] == "Updated" {
			updated = doc
		}
	}
	if len(kinds) < 4 || kinds[0] != "Informer" {
		t.Errorf("document types = %v", kinds)
	}
	if updated == nil {
		t.Fatal("no Updated document")
	}
	changes, _ := updated["changes"].([]any)
	if len(changes) != 1 || changes[0].(map[string]any)["path"] != "data.k" || changes[0].(map[string]any)["new"] != "b" {
		t.Errorf("Updated changes = %v", updated["changes"])
	}
	if m, _ := updated["managers"].([]any); len(m) != 1 || m[0].(map[string]any)["manager"] != "yaml-test" {
		t.Errorf("Updated managers = %v", updated["managers"])
	}
}

// Bad templates and flag values fail the kubectl way: one line, exit 1, before any request.
func TestDisplayBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "jsonpath={.type"}, "error: error parsing jsonpath {.type, unclosed action"},
		{[]string{"-o", "go-template={{.type"}, "error: error parsing template {{.type, template: output:1: unclosed action"},
		{[]string{"-o", "jsonpath"}, "error: template format specified but no template given"},
		{[]string{"-o", "xml"}, `error: unable to match a printer suitable for the output format "xml", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,template,templatefile,wide,yaml`},
		{[]string{"--diff=side-by-side"}, `error: --diff must be inline or full, got "side-by-side"`},
		{[]string{"--timestamps", "utc"}, `error: --timestamps must be one of absolute, relative, none; got "utc"`},
		{[]string{"--hot-loop-window", "0s"}, "error: --hot-loop-window must be > 0"},
	} {
		r := runPlugin(t, cluster, append([]string{"watch", "cm"}, tt.args...)...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// Completion: the plugin's __complete lists resources from discovery, and kubectl's own
// plugin completion runs kubectl_complete-informer.
func TestDisplayCompletion(t *testing.T) {
	r := runPlugin(t, cluster, "__complete", "watch", "config")
	if r.code != 0 || !strings.Contains(r.stdout, "configmaps\n") || !strings.HasSuffix(strings.TrimSpace(r.stdout), ":4") {
		t.Errorf("__complete watch config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runPlugin(t, cluster, "__complete", "watch", "cm,deploy")
	if !strings.Contains(r.stdout, "cm,deployments.apps\n") {
		t.Errorf("__complete watch cm,deploy:\n%s", r.stdout)
	}
	ns := newNamespace(t, cluster)
	if _, err := cluster.Clientset.CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(ns, "completable", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = runPlugin(t, cluster, "__complete", "watch", "cm", "-n", ns, "compl")
	if !strings.Contains(r.stdout, "completable\n") {
		t.Errorf("__complete watch cm NAME:\n%s%s", r.stdout, r.stderr)
	}
	r = runPlugin(t, cluster, "__complete", "watch", "-n", ns, "configmaps/")
	if !strings.Contains(r.stdout, "configmaps/completable\n") {
		t.Errorf("__complete watch configmaps/:\n%s%s", r.stdout, r.stderr)
	}

	// kubectl __complete informer ... finds kubectl_complete-informer on PATH.
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(root, "kubectl_complete-informer"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl_complete-informer"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("kubectl", "__complete", "informer", "watch", "secre")
	for _, kv := range cluster.Environ() {
		if strings.HasPrefix(kv, "PATH=") {
			kv = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
		cmd.Env = append(cmd.Env, kv)
	}
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "secrets\n") {
		t.Errorf("kubectl __complete informer watch secre: %v\n%s", err, out)
	}
}

// Enough ConfigMaps that the cache packs their bytes (pkg/watch/pack.go: after the kind's first
// 64 KiB), over protobuf and over JSON: the objects decoded from packed bytes print and diff
// exactly as created, in JSON and human output, on additions, updates and deletions.
func TestDisplayPackedCache(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
	rng := rand.New(rand.NewPCG(37, 1))
	payload := func() string {
		b := make([]byte, 1024)
		for i := range b {
			b[i] = 'a' + byte(rng.IntN(26))
		}
		return string(b)
	}
	const n = 80 // ~100 KiB of ConfigMaps
	created := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("cm-%03d", i)
		created[name] = payload()
		if _, err := cms.Create(ctx, configMap(ns, name, map[string]string{"payload": created[name], "rev": "0"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Protobuf (the built-ins' wire) and JSON (custom resources' wire) bytes, each packed with a
	// table of their own.
	runs := []struct {
		p    *testenv.PluginRun
		kind string
	}{
		{cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--diff", "-v=4"), "ConfigMap"},
		{cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json", "--diff", "--wire", "json", "-v=4"), "ConfigMap (JSON)"},
	}
	human := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "--diff", "--color", "never", "--timestamps", "none", "--no-headers", "-v=4")
	awaitLine(t, human, "cache synced")
	// Human lines read each listed object's state as it is received (pkg/watch/listprep.go),
	// and the reader packs what it read.
	human.AwaitStderr(t, await, "the packed cache's -v=4 line", func(s string) bool {
		return strings.Contains(s, "Cached ConfigMap objects packed: a table built from their first ")
	})
	for _, r := range runs {
		r.p.AwaitJSON(t, await, is("Synced", ""))
		r.p.AwaitStderr(t, await, "the packed cache's -v=4 line", func(s string) bool {
			return strings.Contains(s, "Cached "+r.kind+" objects packed: a table built from their first ")
		})
		for _, l := range r.p.JSON() {
			if l["type"] != "Added" {
				continue
			}
			name, _ := l["name"].(string)
			data, _ := l["object"].(map[string]any)["data"].(map[string]any)
			if want, ok := created[name]; ok && (data["payload"] != want || data["rev"] != "0") {
				t.Errorf("%s: Added %s: data differs from the created ConfigMap's", r.kind, name)
			}
		}
	}

	// The last ones were listed after the table was built: their cached bytes are packed.
	last, gone := fmt.Sprintf("cm-%03d", n-1), fmt.Sprintf("cm-%03d", n-2)
	next := payload()
	patch := fmt.Sprintf(`{"data":{"payload":%q,"rev":"1"}}`, next)
	patched, err := cms.Patch(ctx, last, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "packer"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		updated := r.p.AwaitJSON(t, await, is("Updated", last))
		if c := findChange(updated, "data.payload"); c == nil || c["old"] != created[last] || c["new"] != next {
			t.Errorf("%s: data.payload change: old or new is not the ConfigMap's (changes: %d)", r.kind, len(updated["changes"].([]any)))
		}
		if c := findChange(updated, "data.rev"); c == nil || c["old"] != "0" || c["new"] != "1" {
			t.Errorf("%s: data.rev change = %v", r.kind, c)
		}
	}
	// A long change goes on lines of its own under the update's, each value cut to 80 runes.
	if line := awaitLine(t, human, "→"+patched.ResourceVersion+" "); !strings.Contains(line, "by packer (Update)") {
		t.Errorf("human update: %q", line)
	}
	if line := awaitLine(t, human, "data.payload: "); !strings.Contains(line, `"`+created[last][:60]) || !strings.Contains(line, `→ "`+next[:60]) {
		t.Errorf("human data.payload change: %q", line)
	}
	awaitLine(t, human, `data.rev: "0" → "1"`)

	if err := cms.Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		deleted := r.p.AwaitJSON(t, await, is("Deleted", gone))
		if data, _ := deleted["object"].(map[string]any)["data"].(map[string]any); data["payload"] != created[gone] {
			t.Errorf("%s: Deleted %s: data differs from the created ConfigMap's", r.kind, gone)
		}
	}
}
