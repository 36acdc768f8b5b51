package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	cmRes     = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	secretRes = discovery.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	rt0       = time.Date(2026, 11, 21, 5, 30, 0, 0, time.UTC)
)

func cmObj(ns, name, rv, app, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": rv, "labels": map[string]any{"app": app}},
		"data":     map[string]any{"v": value},
	}}
}

// replayEvents: config maps in two namespaces and a secret; an update with its old object, as
// the informer delivers it; a reconcile; a delete; a relist.
func replayEvents() []watch.Event {
	at := func(s int) time.Time { return rt0.Add(time.Duration(s) * time.Second) }
	web1 := cmObj("demo", "web-1", "10", "web", "1")
	web1b := cmObj("demo", "web-1", "52", "web", "2")
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"namespace": "demo", "name": "token", "resourceVersion": "12"},
		"data":     map[string]any{"token": "aHVudGVyMg=="},
	}}
	obj := func(t watch.Type, d watch.Delta, s int, u *unstructured.Unstructured, res discovery.Resource) watch.Event {
		return watch.Event{
			Type:            t,
			Obj:             watch.ObjectInfo{Delta: d, Object: u},
			Time:            at(s),
			Resource:        res,
			Namespace:       u.GetNamespace(),
			Name:            u.GetName(),
			ResourceVersion: u.GetResourceVersion(),
		}
	}
	initial := func(u *unstructured.Unstructured, res discovery.Resource) watch.Event {
		ev := obj(watch.Added, watch.DeltaReplaced, 0, u, res)
		ev.Obj.InitialList = true
		return ev
	}
	upd := obj(watch.Updated, watch.DeltaUpdated, 2, web1b, cmRes)
	upd.Obj.OldResourceVersion, upd.Obj.OldObject = "10", web1
	db := cmObj("other", "db", "11", "db", "1")
	dbGone := cmObj("other", "db", "53", "db", "1")
	return []watch.Event{
		{Type: watch.Informer, Time: at(0), Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{ClientGoVersion: "v0.37.1", Queue: "RealFIFO", AtomicEvents: true, Resources: []discovery.Resource{cmRes, secretRes}}}},
		{Type: watch.List, Time: at(0), Resource: cmRes, ResourceVersion: "50", Lifecycle: watch.LifecycleInfo{Items: 2, Initial: true}},
		initial(web1, cmRes),
		initial(db, cmRes),
		{Type: watch.Synced, Time: at(0), Resource: cmRes, Lifecycle: watch.LifecycleInfo{Items: 2}, ResourceVersion: "50"},
		initial(secret, secretRes),
		{Type: watch.Synced, Time: at(0), Resource: secretRes, Lifecycle: watch.LifecycleInfo{Items: 1}, ResourceVersion: "50"},
		{Type: watch.Bookmark, Time: at(1), Resource: cmRes, ResourceVersion: "50"},
		obj(watch.Added, watch.DeltaAdded, 1, cmObj("demo", "web-2", "51", "web", "1"), cmRes),
		upd,
		{Type: watch.Reconciled, Time: at(3), Resource: cmRes, Key: "demo/web-1", Queued: watch.QueuedInfo{Work: 2 * time.Millisecond}, Obj: watch.ObjectInfo{Queue: &watch.QueueFigures{}}},
		obj(watch.Deleted, watch.DeltaDeleted, 4, dbGone, cmRes),
		{Type: watch.Error, Time: at(5), Resource: cmRes, Lifecycle: watch.LifecycleInfo{Verb: "watch", Reason: "Expired", Message: "too old resource version: 53 (60)"}},
		{Type: watch.Relist, Time: at(6), Resource: cmRes, Lifecycle: watch.LifecycleInfo{FromResourceVersion: "53", Counts: watch.RelistCounts{Unchanged: 2}}, ResourceVersion: "60"},
	}
}

// record writes events as `watch --record` does and returns the file and its lines.
func record(t *testing.T, events []watch.Event, showSecrets bool) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.ndjson")
	r, err := printer.NewRecorder(path, recording.Header{ServerVersion: "v1.37.1", Flags: map[string]string{"resources": "cm,secrets"}},
		[]discovery.Resource{cmRes, secretRes}, showSecrets, "v0.9.0")
	if err != nil {
		t.Fatal(err)
	}
	analyze(events)
	for i := range events {
		if err := r.Write(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
}

// runReplay runs `replay args...` offline (no kubeconfig at all) and returns stdout, stderr and
// the error main would print.
func runReplay(t *testing.T, ctx context.Context, stdin string, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "does-not-exist"))
	var out, errb bytes.Buffer
	return runReplayTo(t, ctx, stdin, &out, &errb, args...)
}

func runReplayTo(t *testing.T, ctx context.Context, stdin string, out, errb interface {
	Write([]byte) (int, error)
	String() string
}, args ...string) (string, string, error) {
	t.Helper()
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errb}
	configFlags := genericclioptions.NewConfigFlags(true)
	// NewCmdInformer registers klog's flags, once per process: build the same tree without it.
	root := &cobra.Command{Use: "informer", SilenceErrors: true, SilenceUsage: true}
	configFlags.AddFlags(root.PersistentFlags())
	root.AddCommand(NewCmdReplay(configFlags, streams))
	root.SetArgs(append([]string{"replay"}, args...))
	root.SetOut(out)
	root.SetErr(errb)
	err := root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

func render(t *testing.T, opts printer.Options, events []watch.Event) string {
	t.Helper()
	var buf bytes.Buffer
	p := printer.New(&buf, opts)
	analyze(events)
	for i := range events {
		if err := p.Print(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// analyze completes events in place as watch's analysis step does before every output.
func analyze(events []watch.Event) {
	step := analysis.New(analysis.Config{Changes: true})
	for i := range events {
		step.Analyze(nil, &events[i])
	}
}

// -o json gives back the recorded lines, byte for byte; human output is what watch printed.
func TestReplaySamePrinters(t *testing.T) {
	events := replayEvents()
	path, lines := record(t, events, false)
	out, stderr, err := runReplay(t, context.Background(), "", path, "-o", "json", "--no-summary")
	if err != nil || stderr != "" {
		t.Fatalf("replay: %v; stderr %q", err, stderr)
	}
	if diff := cmp.Diff(strings.Join(lines[1:], "")+"\n", out); diff != "" {
		t.Errorf("-o json differs from the recording (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		args []string
		opts printer.Options
	}{
		{nil, printer.Options{}},
		{[]string{"--show-bookmarks", "--show-reconciles"}, printer.Options{ShowBookmarks: true, ShowReconciles: true}},
		{[]string{"--diff"}, printer.Options{Diff: "inline"}},
		{[]string{"--diff=full", "--timestamps", "relative"}, printer.Options{Diff: "full", Timestamps: "relative"}},
		{[]string{"-o", "wide", "--color", "always"}, printer.Options{Output: "wide", Color: true}},
		{[]string{"-o", "yaml"}, printer.Options{Output: "yaml"}},
		{[]string{"-o", "jsonpath={.type} {.name}{\"\\n\"}"}, printer.Options{Output: "jsonpath={.type} {.name}{\"\\n\"}"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, stderr, err := runReplay(t, context.Background(), "", append([]string{path, "--no-summary"}, tt.args...)...)
			if err != nil || stderr != "" {
				t.Fatalf("replay: %v; stderr %q", err, stderr)
			}
			tt.opts.PluginVersion = "v0.9.0"
			want := render(t, tt.opts, events)
			if tt.opts.Output == "" || tt.opts.Output == "wide" {
				first, rest, _ := strings.Cut(out, "\n")
				if !strings.Contains(first, "# replay of "+path+": recorded ") || !strings.Contains(first, "v0.9.0") || !strings.Contains(first, "v1.37.1") {
					t.Errorf("first line %q", first)
				}
				out = rest
			}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("replay differs from the live rendering (-want +got):\n%s", diff)
			}
		})
	}
	// --no-headers leaves out both # lines.
	out, _, _ = runReplay(t, context.Background(), "", path, "--no-headers", "--no-summary")
	if strings.Contains(out, "#") {
		t.Errorf("--no-headers:\n%s", out)
	}
}

type shown struct{ Type, Name string }

func shownOf(t *testing.T, out string) []shown {
	t.Helper()
	var got []shown
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		ev, err := recording.DecodeEvent([]byte(l))
		if err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		name := ev.Name
		if ev.Type == watch.Reconciled {
			name = ev.Key
		}
		got = append(got, shown{string(ev.Type), name})
	}
	return got
}

func TestReplayFilters(t *testing.T) {
	path, _ := record(t, replayEvents(), false)
	tests := []struct {
		name string
		args []string
		want []shown
	}{
		{"types", []string{"--types", "Added,deleted"}, []shown{{"Added", "web-1"}, {"Added", "db"}, {"Added", "token"}, {"Added", "web-2"}, {"Deleted", "db"}}},
		{"name argument", []string{"web-1", "--types", "Added,Updated,Deleted,Reconciled,Relist"}, []shown{{"Added", "web-1"}, {"Updated", "web-1"}, {"Reconciled", "demo/web-1"}, {"Relist", ""}}},
		{"name pattern", []string{"--name", "web-*", "--types", "Added"}, []shown{{"Added", "web-1"}, {"Added", "web-2"}}},
		{"two names", []string{"--name", "db", "--name", "token", "--types", "Added"}, []shown{{"Added", "db"}, {"Added", "token"}}},
		{"namespace", []string{"-n", "other", "--types", "Added,Deleted,Synced"}, []shown{{"Added", "db"}, {"Synced", ""}, {"Synced", ""}, {"Deleted", "db"}}},
		{"all namespaces by default", []string{"--types", "Deleted"}, []shown{{"Deleted", "db"}}},
		{"-A overrides -n", []string{"-n", "nowhere", "-A", "--types", "Deleted"}, []shown{{"Deleted", "db"}}},
		{"label selector", []string{"-l", "app=web", "--types", "Added,Updated,Reconciled"}, []shown{{"Added", "web-1"}, {"Added", "web-2"}, {"Updated", "web-1"}, {"Reconciled", "demo/web-1"}}},
		{"resource", []string{"--resource", "Secret", "--types", "Added,Synced,Informer"}, []shown{{"Informer", ""}, {"Added", "token"}, {"Synced", ""}}},
		{"resource, short name", []string{"--resource", "cm", "--types", "Added,Synced"}, []shown{{"Added", "web-1"}, {"Added", "db"}, {"Synced", ""}, {"Added", "web-2"}}},
		{"resource, singular", []string{"--resource", "secret", "--types", "Added"}, []shown{{"Added", "token"}}},
		{"resource, version-qualified", []string{"--resource", "secrets.v1.", "--types", "Added"}, []shown{{"Added", "token"}}},
		{"resources, a list", []string{"--resource", "cm,Secret", "--types", "Added"}, []shown{{"Added", "web-1"}, {"Added", "db"}, {"Added", "token"}, {"Added", "web-2"}}},
		{"since a duration", []string{"--since", "2s", "--types", "Added,Updated,Deleted"}, []shown{{"Updated", "web-1"}, {"Deleted", "db"}}},
		{"until RFC 3339", []string{"--until", "2026-11-21T05:30:01Z", "--types", "Added,Updated"}, []shown{{"Added", "web-1"}, {"Added", "db"}, {"Added", "token"}, {"Added", "web-2"}}},
		{"since and until, clock times", []string{"--since", rt0.Add(2 * time.Second).Local().Format("15:04:05"), "--until", rt0.Add(4 * time.Second).Local().Format("15:04:05.000"), "--types", "Updated,Reconciled,Deleted,Error"},
			[]shown{{"Updated", "web-1"}, {"Reconciled", "demo/web-1"}, {"Deleted", "db"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, err := runReplay(t, context.Background(), "", append([]string{path, "-o", "json", "--no-summary"}, tt.args...)...)
			if err != nil || stderr != "" {
				t.Fatalf("%v; stderr %q", err, stderr)
			}
			if diff := cmp.Diff(tt.want, shownOf(t, out)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplayBadFlags(t *testing.T) {
	path, _ := record(t, replayEvents(), false)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.ndjson")
	notRecording := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notRecording, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "you must specify a recording"},
		{[]string{path, "a", "b"}, "too many arguments"},
		{[]string{path, "--types", "Added,Teleported"}, `unknown type "Teleported" in --types; known types: Informer, Added`},
		{[]string{path, "--speed", "-1"}, "--speed must be 0"},
		{[]string{path, "--since", "yesterday"}, `--since "yesterday" is neither an RFC 3339 time`},
		{[]string{path, "--until", "-5m"}, "--until must be a time or a duration >= 0"},
		{[]string{path, "-o", "xml"}, `unable to match a printer suitable for the output format "xml"`},
		{[]string{path, "--color", "pink"}, "--color must be one of"},
		{[]string{path, "--diff=some"}, "--diff must be inline or full"},
		{[]string{path, "-l", "a=(b"}, `invalid label selector "a=(b"`},
		{[]string{path, "--name", "[x"}, `invalid name pattern "[x"`},
		{[]string{missing}, `the path "` + missing + `" does not exist`},
		{[]string{dir}, dir + " is a directory, not a recording"},
		{[]string{notRecording}, notRecording + " is not a recording: every line is damaged (line 1, 2)"},
		{[]string{path, "--resource", "nosuch"}, `the recording has no resource type "nosuch" (it has: configmaps, secrets)`},
		{[]string{path, "--resource", "deploy"}, `the recording has no resource type "deploy" (it has: configmaps, secrets)`},
		{[]string{path, "--resource", "configmap,rs"}, `the recording has no resource type "rs" (it has: configmaps, secrets)`},
		{[]string{path, "--resource", "secrts"}, `the recording has no resource type "secrts" (it has: configmaps, secrets); did you mean "secrets"?`},
		{[]string{path, "--resource", "sec/x"}, `--resource takes resource types, not objects`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := runReplay(t, context.Background(), "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if out != "" {
				t.Errorf("stdout: %q", out)
			}
		})
	}
}

// Damaged input: each bad line named on stderr, the rest replayed, an error at the end;
// --strict stops at the first.
func TestReplayDamaged(t *testing.T) {
	_, lines := record(t, replayEvents(), false)
	bad := append([]string{}, lines[:4]...)
	bad = append(bad, "{\"time\":\"2026-11-21T05:30:00Z\",\"type\":\"Added\",\"name\n")
	bad = append(bad, lines[4:7]...)
	bad = append(bad, "\"just a string\"\n")
	bad = append(bad, lines[7:]...)
	path := filepath.Join(t.TempDir(), "damaged.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(bad, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runReplay(t, context.Background(), "", path, "-o", "json")
	if err == nil || err.Error() != path+": 2 damaged lines not replayed (line 5, 9)" {
		t.Errorf("error: %v", err)
	}
	for _, want := range []string{"error: line 5: invalid JSON: unexpected end of JSON input", "error: line 9: invalid JSON: not an object", "--- kubectl informer: summary of " + path} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if diff := cmp.Diff(strings.Join(lines[1:], "")+"\n", out); diff != "" {
		t.Errorf("the other lines are not all replayed (-want +got):\n%s", diff)
	}

	out, stderr, err = runReplay(t, context.Background(), "", path, "-o", "json", "--strict")
	if err == nil || !strings.Contains(err.Error(), "line 5: invalid JSON") || !strings.Contains(err.Error(), "--strict") {
		t.Errorf("--strict error: %v", err)
	}
	if stderr != "" {
		t.Errorf("--strict stderr (the error is returned, printed once by main): %q", stderr)
	}
	if diff := cmp.Diff(strings.Join(lines[1:4], ""), out); diff != "" {
		t.Errorf("--strict did not stop at line 5 (-want +got):\n%s", diff)
	}
}

// A template that fails on events says so on stderr for each and the replay exits non-zero,
// as kubectl does when its template fails (issue #38: it exited 0); one that fails on none exits 0.
func TestReplayTemplateFailureExits(t *testing.T) {
	path, _ := record(t, replayEvents(), false)
	out, stderr, err := runReplay(t, context.Background(), "", path, "-o", "go-template={{index .managers 0}}", "--no-summary")
	if err == nil || !strings.Contains(err.Error(), "the -o template failed on") {
		t.Errorf("error %v, want the template's failures counted; stdout %q", err, out)
	}
	if !strings.Contains(stderr, "error executing template") {
		t.Errorf("stderr lacks the failing events:\n%s", stderr)
	}
	if _, _, err := runReplay(t, context.Background(), "", path, "-o", "go-template={{.type}}", "--no-summary"); err != nil {
		t.Errorf("a template that fails on nothing: %v", err)
	}
}

func TestReplayFormat(t *testing.T) {
	_, lines := record(t, replayEvents(), false)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A newer format: one clear error, nothing replayed.
	newer := write("newer", strings.Replace(strings.Join(lines, ""), `"formatVersion":1`, `"formatVersion":2`, 1))
	out, stderr, err := runReplay(t, context.Background(), "", newer)
	if err == nil || !strings.Contains(err.Error(), "format version 2; this kubectl informer reads format version 1") || out != "" || stderr != "" {
		t.Errorf("newer format: %v; stdout %q; stderr %q", err, out, stderr)
	}
	// Plain -o json output: a warning, then the replay.
	plain := write("plain", strings.Join(lines[1:], ""))
	out, stderr, err = runReplay(t, context.Background(), "", plain, "-o", "json", "--no-summary")
	if err != nil || !strings.HasPrefix(stderr, "warning: "+plain+" has no recording header") || out != strings.Join(lines[1:], "")+"\n" {
		t.Errorf("headerless: %v; stderr %q; %d bytes out", err, stderr, len(out))
	}
	// Unknown types and fields, from a newer plugin: one warning per type, the rest replayed.
	future := `{"time":"2026-11-21T05:30:09Z","type":"Teleported","group":"","version":"v1","resource":"configmaps"}` + "\n"
	fut := write("future", strings.Join(lines[:3], "")+future+future+strings.ReplaceAll(strings.Join(lines[3:], ""), `"type":"Added",`, `"type":"Added","someday":{"x":1},`))
	out, stderr, err = runReplay(t, context.Background(), "", fut, "-o", "json", "--no-summary")
	if err != nil || strings.Count(stderr, "unknown line type \"Teleported\"") != 1 || !strings.Contains(stderr, "warning: line 4:") || out != strings.Join(lines[1:], "")+"\n" {
		t.Errorf("forward compatibility: %v; stderr %q\n%s", err, stderr, out)
	}
	// Empty input is not a recording.
	if _, _, err := runReplay(t, context.Background(), "", write("empty", "")); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty: %v", err)
	}
	// Standard input.
	out, _, err = runReplay(t, context.Background(), strings.Join(lines, ""), "-", "-o", "json", "--no-summary")
	if err != nil || out != strings.Join(lines[1:], "")+"\n" {
		t.Errorf("stdin: %v\n%s", err, out)
	}
}

// Secrets: a redacted recording stays redacted once, not twice; one recorded with their values
// is redacted on replay unless --show-secrets.
func TestReplaySecrets(t *testing.T) {
	events := replayEvents()
	redacted, _ := record(t, events, false)
	out, stderr, err := runReplay(t, context.Background(), "", redacted, "-o", "json", "--types", "Added,Informer", "--resource", "secrets", "--show-secrets", "--no-summary")
	if err != nil || !strings.Contains(out, `"token":"\u003credacted: 12 bytes\u003e"`) || !strings.Contains(out, `"secretsRedacted":true`) {
		t.Errorf("%v\n%s", err, out)
	}
	if !strings.Contains(stderr, "warning: the recording's Secret values were redacted when it was made") {
		t.Errorf("no warning for --show-secrets: %q", stderr)
	}
	shownFile, _ := record(t, events, true)
	out, _, _ = runReplay(t, context.Background(), "", shownFile, "-o", "json", "--resource", "secrets", "--no-summary")
	if strings.Contains(out, "aHVudGVyMg==") || !strings.Contains(out, "redacted: 12 bytes") {
		t.Errorf("a recording with values is not redacted on replay:\n%s", out)
	}
	out, _, _ = runReplay(t, context.Background(), "", shownFile, "-o", "json", "--resource", "secrets", "--show-secrets", "--no-summary")
	if !strings.Contains(out, "aHVudGVyMg==") || !strings.Contains(out, `"secretsRedacted":false`) {
		t.Errorf("--show-secrets does not show recorded values:\n%s", out)
	}
}

// Hot loops: the recorded HotLoop lines by default; --hot-loop-updates detects them again.
func TestReplayHotLoops(t *testing.T) {
	at := func(ms int) time.Time { return rt0.Add(time.Duration(ms) * time.Millisecond) }
	prev := cmObj("demo", "busy", "1", "web", "0")
	events := []watch.Event{{Type: watch.Added, Time: at(0), Resource: cmRes, Namespace: "demo", Name: "busy", ResourceVersion: "1", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: prev}}}
	hot := analysis.New(analysis.Config{HotLoopUpdates: 3, HotLoopWindow: time.Minute})
	for i := 2; i < 8; i++ {
		cur := cmObj("demo", "busy", string(rune('0'+i)), "web", string(rune('a'+i)))
		ev := watch.UpdateOf(cmRes, prev, cur, at(i*10))
		events = hot.Analyze(events, &ev)
		prev = cur
	}
	path, lines := record(t, events, false)
	recorded := strings.Count(strings.Join(lines, ""), `"type":"HotLoop"`)
	if recorded == 0 {
		t.Fatal("the sample has no HotLoop line")
	}
	count := func(args ...string) int {
		out, _, err := runReplay(t, context.Background(), "", append([]string{path, "-o", "json", "--no-summary"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(out, `"type":"HotLoop"`)
	}
	if got := count(); got != recorded {
		t.Errorf("%d HotLoop lines, recorded %d", got, recorded)
	}
	if got := count("--hot-loop-updates", "0"); got != 0 {
		t.Errorf("--hot-loop-updates 0: %d HotLoop lines", got)
	}
	if got := count("--hot-loop-updates", "3"); got != recorded {
		t.Errorf("--hot-loop-updates 3 (as recorded): %d HotLoop lines, want %d", got, recorded)
	}
}

// lineSignal is a stdout that says when the first line is written.
type lineSignal struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan struct{}
	once  sync.Once
}

func (l *lineSignal) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(b)
	if bytes.Contains(b, []byte("\n")) {
		l.once.Do(func() { close(l.first) })
	}
	return n, err
}

func (l *lineSignal) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// --speed paces by the recorded times: a fast factor replays everything; an interrupt during a
// wait ends the replay quietly, as Ctrl-C ends watch. No wall-clock assertions.
func TestReplaySpeed(t *testing.T) {
	path, lines := record(t, replayEvents(), false)
	out, _, err := runReplay(t, context.Background(), "", path, "-o", "json", "--speed", "1000", "--no-summary")
	if err != nil || out != strings.Join(lines[1:], "")+"\n" {
		t.Errorf("--speed 1000: %v\n%s", err, out)
	}
	// Real time would take the recording's 6 seconds; interrupt it after the first line.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &lineSignal{first: make(chan struct{})}
	go func() {
		<-stdout.first
		cancel()
	}()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	out, stderr, err := runReplayTo(t, ctx, "", stdout, &bytes.Buffer{}, path, "-o", "json", "--speed", "0.001")
	if err != nil {
		t.Errorf("interrupted: %v", err)
	}
	if n := strings.Count(out, "\n"); n == 0 || n >= len(lines)-1 {
		t.Errorf("interrupted replay printed %d lines", n)
	}
	if !strings.Contains(stderr, "summary of") {
		t.Errorf("no summary after the interrupt: %q", stderr)
	}
}

// Events (--events) are kept or filtered by the object they regard: a name, a namespace or a
// label selector given to replay keeps the Events about what it keeps, and only those.
func TestReplayFiltersEventsByRegarding(t *testing.T) {
	events := replayEvents()
	for i := range events {
		if u := events[i].Obj.Object; u != nil {
			u.SetUID(types.UID("uid-" + u.GetNamespace() + "-" + u.GetName()))
		}
	}
	evRes := discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	kube := func(name, ns, about string) watch.Event {
		return watch.Event{
			Type:            watch.KubeEvent,
			Obj:             watch.ObjectInfo{Delta: watch.DeltaAdded},
			Time:            rt0.Add(3 * time.Second),
			Resource:        evRes,
			Namespace:       ns,
			Name:            name,
			ResourceVersion: "70",
			Kube: &watch.KubeEventInfo{Reason: "Changed", Note: "something about " + about, EventType: "Normal",
				Regarding: watch.Regarding{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: about, UID: "uid-" + ns + "-" + about}},
		}
	}
	events = append(events, kube("web-1.a", "demo", "web-1"), kube("db.b", "other", "db"))
	path, _ := record(t, events, false)
	tests := []struct {
		name string
		args []string
		want []shown
	}{
		{"every Event", nil, []shown{{"KubeEvent", "web-1.a"}, {"KubeEvent", "db.b"}}},
		{"a name", []string{"web-1"}, []shown{{"KubeEvent", "web-1.a"}}},
		{"a namespace", []string{"-n", "other"}, []shown{{"KubeEvent", "db.b"}}},
		{"a label selector", []string{"-l", "app=web"}, []shown{{"KubeEvent", "web-1.a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{path, "-o", "json", "--no-summary", "--types", "KubeEvent"}, tt.args...)
			out, stderr, err := runReplay(t, context.Background(), "", args...)
			if err != nil || stderr != "" {
				t.Fatalf("%v; stderr %q", err, stderr)
			}
			if diff := cmp.Diff(tt.want, shownOf(t, out)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
