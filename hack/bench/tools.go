package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A tool is one command the bench measures. Its stdout is read line by line, and names says
// which objects a line stands for.
type tool struct {
	name  string // flag and table name
	label string // the command, for the report
	args  func(b binaries, kubeconfig string) (path string, args []string)
	// names calls fn with the number of every object line stands for (default: the first
	// object name in the line, objPrefix and six digits; nothing else any tool prints
	// contains that).
	names func(line []byte, fn func(int))
	// dropped, if set, returns the number of lines a line says were not shown (the plugin's
	// human output drops object lines when stdout falls behind, and says how many).
	dropped func(line []byte) int
	// synced, if set, returns the items of a line that says the initial list is in (the wire
	// tool prints no line per object of it, only a Synced line).
	synced func(line []byte) (items int, ok bool)
	// env is added to the tool's environment (a variant: "plugin+GOGC=50"), extra to its
	// arguments ("plugin+--disable-compression").
	env, extra []string
	// optional tools run only when -tools names them.
	optional bool
	// progress, for the top workload's tools, is the kind of line that says the tool has
	// every object (progressRanking, progressSynced); empty for the other workloads' tools.
	progress string
	// profileArgs, if set, are the flags that make the tool write a CPU and a heap profile.
	profileArgs func(cpu, heap string) []string
}

func pluginProfileArgs(cpu, heap string) []string {
	return []string{"--cpuprofile", cpu, "--memprofile", heap}
}

type binaries struct {
	plugin, minimal, kubectl string
	wire                     string // the wire limit (hack/bench/wire), when a tool of it runs
	metafloor                string // the top workload's metadata-only informers (hack/bench/metafloor)
	kubectlNote              string // how kubectl was resolved
	pluginGiven              bool   // -plugin
	before                   string // -before: the earlier build the before-TOOL tools run
}

var (
	anyName         = []byte(objPrefix)
	jsonName        = []byte(`"name":"` + objPrefix)
	jsonNameIndent  = []byte(`"name": "` + objPrefix)
	reconciledField = []byte(`"type":"Reconciled"`)
)

func firstName(line []byte, fn func(int)) { scanNames(line, anyName, false, fn) }

var tools = []*tool{
	{
		name:  "plugin",
		label: "kubectl-informer watch cm -n NS --color never",
		args: func(b binaries, kc string) (string, []string) {
			return b.plugin, []string{"watch", resArg, "-n", namespace, "--color", "never", "--kubeconfig", kc}
		},
		dropped:     droppedLine,
		profileArgs: pluginProfileArgs,
	},
	{
		// What a user runs: kubectl's plugin lookup finds kubectl-informer on PATH and execs it
		// (the same process: its peak RSS is the plugin's). Optional: beside plugin+--diff it
		// shows what the lookup costs (pluginLookupDir puts the plugin on PATH).
		name:     "plugin-kubectl",
		label:    "kubectl informer watch cm -n NS --color never --diff (kubectl's plugin lookup, which execs kubectl-informer)",
		optional: true,
		args: func(b binaries, kc string) (string, []string) {
			return b.kubectl, []string{"informer", "watch", resArg, "-n", namespace, "--color", "never", "--diff", "--kubeconfig", kc}
		},
		dropped: droppedLine,
	},
	{
		name:  "plugin-meta",
		label: "kubectl-informer watch cm -n NS --color never --metadata-only",
		args: func(b binaries, kc string) (string, []string) {
			return b.plugin, []string{"watch", resArg, "-n", namespace, "--color", "never", "--metadata-only", "--kubeconfig", kc}
		},
		dropped:     droppedLine,
		profileArgs: pluginProfileArgs,
	},
	{
		name:  "plugin-json",
		label: "kubectl-informer watch cm -n NS -o json",
		args: func(b binaries, kc string) (string, []string) {
			return b.plugin, []string{"watch", resArg, "-n", namespace, "-o", "json", "--kubeconfig", kc}
		},
		// Reconciled lines (always in JSON: the simulated worker behind the queue) carry
		// the key "NS/name" too; only Added/Updated/Deleted are the object's lines.
		names: func(line []byte, fn func(int)) {
			if !bytes.Contains(line[:min(len(line), 96)], reconciledField) {
				firstName(line, fn)
			}
		},
		profileArgs: pluginProfileArgs,
	},
	{
		name:  "kubectl",
		label: "kubectl get cm -n NS -w",
		args: func(b binaries, kc string) (string, []string) {
			return b.kubectl, []string{"get", resArg, "-n", namespace, "-w", "--kubeconfig", kc}
		},
	},
	{
		name:  "kubectl-json",
		label: "kubectl get cm -n NS -w --output-watch-events -o json",
		args: func(b binaries, kc string) (string, []string) {
			return b.kubectl, []string{"get", resArg, "-n", namespace, "-w", "--output-watch-events", "-o", "json", "--kubeconfig", kc}
		},
		names: kubectlJSONNames,
	},
	{
		// kubectl pages its list (--chunk-size 500 by default); on the test server each page
		// takes a round trip of its own. Optional: for comparison.
		name:     "kubectl-nochunk",
		label:    "kubectl get cm -n NS -w --chunk-size=0",
		optional: true,
		args: func(b binaries, kc string) (string, []string) {
			return b.kubectl, []string{"get", resArg, "-n", namespace, "-w", "--chunk-size=0", "--kubeconfig", kc}
		},
	},
	{
		name:     "kubectl-json-nochunk",
		label:    "kubectl get cm -n NS -w --output-watch-events -o json --chunk-size=0",
		optional: true,
		args: func(b binaries, kc string) (string, []string) {
			return b.kubectl, []string{"get", resArg, "-n", namespace, "-w", "--output-watch-events", "-o", "json", "--chunk-size=0", "--kubeconfig", kc}
		},
		names: kubectlJSONNames,
	},
	{
		name:  "minimal",
		label: "hack/bench/minimal -n NS (a dynamic shared informer, one line per event)",
		args: func(b binaries, kc string) (string, []string) {
			return b.minimal, []string{"-kubeconfig", kc, "-n", namespace, "-resource", resPlural}
		},
		profileArgs: func(cpu, heap string) []string { return []string{"-cpuprofile", cpu, "-memprofile", heap} },
	},
	{
		// The wire limit: what the server sends, copied, not decoded, uncompressed (wire+-gzip:
		// gzipped, as client-go asks by default). One Synced line for the initial list, then one
		// line per event.
		name:  "wire",
		label: "hack/bench/wire -n NS (the streaming list in protobuf, uncompressed, frames counted, not decoded; one Synced line, then a line per event)",
		args: func(b binaries, kc string) (string, []string) {
			return b.wire, []string{"-kubeconfig", kc, "-n", namespace, "-resource", resPlural}
		},
		synced: func(line []byte) (int, bool) {
			res, items, ok := syncedLine(line)
			return items, ok && res == resPlural
		},
	},
}

// syncedLine reads a Synced line of watch -o json (and of hack/bench/metafloor and
// hack/bench/wire, of the same shape): its resource (PLURAL.GROUP, PLURAL for the core group)
// and items.
func syncedLine(line []byte) (resource string, items int, ok bool) {
	if !bytes.Contains(line, syncedType) {
		return "", 0, false
	}
	var rec struct {
		Group    string `json:"group"`
		Resource string `json:"resource"`
		Items    int    `json:"items"`
	}
	if json.Unmarshal(line, &rec) != nil {
		return "", 0, false
	}
	resource = rec.Resource
	if rec.Group != "" {
		resource += "." + rec.Group
	}
	return resource, rec.Items, true
}

// kubectlJSONNames: kubectl prints each page of its initial list (500 objects) as one line,
// {"type":"ADDED","object":{"kind":"List","items":[...]}}, then one line per watch event:
// every metadata.name in a line counts. (Older kubectls indent the JSON, one field per line.)
func kubectlJSONNames(line []byte, fn func(int)) {
	scanNames(line, jsonName, true, fn)
	if bytes.HasPrefix(bytes.TrimLeft(line, " \t"), jsonNameIndent) {
		firstName(line, fn)
	}
}

// droppedRE is the plugin's human Dropped line: "... Dropped     202 lines not shown: ...".
var droppedRE = regexp.MustCompile(`\bDropped +(\d+) lines? not shown`)

func droppedLine(line []byte) int {
	if !bytes.Contains(line, []byte("Dropped")) {
		return 0
	}
	m := droppedRE.FindSubmatch(line)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// scanNames calls fn with the six-digit number following marker in line: the first one, or
// every one.
func scanNames(line, marker []byte, all bool, fn func(int)) {
	for off := 0; off < len(line); {
		i := bytes.Index(line[off:], marker)
		if i < 0 {
			return
		}
		start := off + i + len(marker)
		off = start
		if podIndex != nil { // the pods workload: names made by a ReplicaSet
			end := start
			for end < len(line) && (isDigit(line[end]) || (line[end] >= 'a' && line[end] <= 'z') || line[end] == '-') {
				end++
			}
			if n, ok := podIndex[objPrefix+string(line[start:end])]; ok {
				fn(n)
				if !all {
					return
				}
			}
			continue
		}
		if start+6 > len(line) || (start+6 < len(line) && isDigit(line[start+6])) {
			continue
		}
		n := 0
		for _, c := range line[start : start+6] {
			if !isDigit(c) {
				n = -1
				break
			}
			n = n*10 + int(c-'0')
		}
		if n >= 0 {
			fn(n)
			if !all {
				return
			}
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// toolNames are the tools run by default.
func toolNames() []string {
	var names []string
	for _, t := range tools {
		if !t.optional {
			names = append(names, t.name)
		}
	}
	return names
}

// toolByName finds a tool, or makes a variant of one: "BASE+KEY=VALUE[+...]" runs BASE with
// those environment variables (e.g. plugin+GOGC=50, minimal+KUBE_FEATURE_WatchListClient=false),
// and "BASE+-FLAG" with that extra argument (plugin+--disable-compression).
func toolByName(name string) *tool {
	if rest, ok := strings.CutPrefix(name, beforePrefix); ok {
		return beforeTool(name, toolByName(rest))
	}
	base, parts, variant := strings.Cut(name, "+")
	for _, t := range tools {
		if t.name != base {
			continue
		}
		if !variant {
			return t
		}
		v := *t
		v.name = name
		v.env, v.extra = nil, nil
		for _, p := range strings.Split(parts, "+") {
			if strings.HasPrefix(p, "-") {
				v.extra = append(v.extra, p)
				continue
			}
			if k, _, ok := strings.Cut(p, "="); !ok || k == "" {
				return nil
			}
			v.env = append(v.env, p)
		}
		v.label = strings.TrimSpace(strings.Join(v.env, " ") + " " + t.label + " " + strings.Join(v.extra, " "))
		return &v
	}
	return nil
}

// beforePrefix names a plugin tool run with the -before binary: before-plugin+--diff.
const beforePrefix = "before-"

// beforeTool is t run with the -before binary instead of the plugin; nil when t is not a plugin
// tool.
func beforeTool(name string, t *tool) *tool {
	if t == nil || t.profileArgs == nil || !strings.HasPrefix(t.name, "plugin") {
		return nil
	}
	v := *t
	v.name, v.label = name, "(-before) "+t.label
	v.args = func(b binaries, kc string) (string, []string) {
		_, args := t.args(b, kc)
		return b.before, args
	}
	return &v
}

// goCmd is the go command: $GO (as the Makefile passes it) or go.
func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// buildTools builds the plugin (unless -plugin), the minimal informer and the wire tool into dir as the release
// builds the plugin (.goreleaser.yaml: CGO_ENABLED=0, -trimpath, -s -w), and finds kubectl. A
// cgo build is not what users run, and is larger: a dependency (kustomize, through cli-runtime)
// imports package plugin, which makes the linker export every symbol; its pages count in RSS.
func buildTools(ctx context.Context, root, dir string, c *config) (binaries, error) {
	var b binaries
	build := func(out, pkg string) error {
		cmd := exec.CommandContext(ctx, goCmd(), "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", pkg, err, msg)
		}
		return nil
	}
	b.before = c.before
	if c.plugin != "" {
		b.plugin, b.pluginGiven = c.plugin, true
	} else {
		b.plugin = filepath.Join(dir, "kubectl-informer")
		if err := build(b.plugin, "./cmd/kubectl-informer"); err != nil {
			return b, err
		}
	}
	b.minimal = filepath.Join(dir, "minimal")
	if err := build(b.minimal, "./hack/bench/minimal"); err != nil {
		return b, err
	}
	if slices.ContainsFunc(c.tools, func(n string) bool { return n == "wire" || strings.HasPrefix(n, "wire+") }) {
		b.wire = filepath.Join(dir, "wire")
		if err := build(b.wire, "./hack/bench/wire"); err != nil {
			return b, err
		}
	}
	if c.workload == workloadTop {
		b.metafloor = filepath.Join(dir, "metafloor")
		if err := build(b.metafloor, "./hack/bench/metafloor"); err != nil {
			return b, err
		}
	}
	if slices.Contains(c.tools, "plugin-kubectl") {
		if err := pluginLookupDir(dir, b.plugin); err != nil {
			return b, err
		}
	}
	if needsKubectl(c.tools) || slices.Contains(c.tools, "plugin-kubectl") {
		var err error
		if b.kubectl, b.kubectlNote, err = findKubectl(ctx, c.kubectl); err != nil {
			if c.toolsGiven || c.kubectl != "" {
				return b, err
			}
			// The default set on a machine without kubectl: measure the rest.
			logf("warning: %v; leaving out the kubectl tools", err)
			c.tools = slices.DeleteFunc(c.tools, func(n string) bool { return strings.HasPrefix(n, "kubectl") })
		}
	}
	return b, nil
}

// pluginLookupDir makes dir/lookup hold the plugin as kubectl-informer and puts it first on the
// PATH of the plugin-kubectl tool, so that kubectl's lookup finds this build and no other.
func pluginLookupDir(dir, plugin string) error {
	lookup := filepath.Join(dir, "lookup")
	if err := os.MkdirAll(lookup, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(plugin, filepath.Join(lookup, "kubectl-informer")); err != nil && !os.IsExist(err) {
		return err
	}
	toolByName("plugin-kubectl").env = []string{"PATH=" + lookup + string(os.PathListSeparator) + os.Getenv("PATH")}
	return nil
}

func needsKubectl(names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, "kubectl") {
			return true
		}
	}
	return false
}

// findKubectl returns the kubectl to run. The Google Cloud SDK installs a "dispatcher" as
// kubectl that picks one of the kubectl.1.N binaries beside it for each call; measuring it
// would add the dispatcher's own start and a second process, so the newest kubectl.1.N is run
// directly instead.
func findKubectl(ctx context.Context, explicit string) (path, note string, err error) {
	if explicit != "" {
		return explicit, "given with -kubectl", nil
	}
	path, err = exec.LookPath("kubectl")
	if err != nil {
		return "", "", fmt.Errorf("kubectl not found on PATH (the bench compares against kubectl get -w; use -tools to leave it out): %w", err)
	}
	v := kubectlVersion(ctx, path)
	if !strings.Contains(v, "dispatcher") {
		return path, "kubectl on PATH", nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path, "kubectl on PATH (a dispatcher)", nil //nolint:nilerr // measure the dispatcher then
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(real), "kubectl.1.*"))
	best, bestMinor := "", -1
	for _, m := range matches {
		if minor, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), "kubectl.1.")); err == nil && minor > bestMinor {
			best, bestMinor = m, minor
		}
	}
	if best == "" {
		return path, "kubectl on PATH (a dispatcher)", nil
	}
	return best, fmt.Sprintf("%s: kubectl on PATH is the Google Cloud SDK dispatcher (%s); its newest kubectl is run directly", filepath.Base(best), v), nil
}

// kubectlVersion is kubectl's client gitVersion ("" if it cannot tell).
func kubectlVersion(ctx context.Context, path string) string {
	out, err := exec.CommandContext(ctx, path, "version", "--client", "-o", "json").Output()
	if err != nil {
		return ""
	}
	var v struct {
		ClientVersion struct {
			GitVersion string `json:"gitVersion"`
			GoVersion  string `json:"goVersion"`
		} `json:"clientVersion"`
	}
	if json.Unmarshal(out, &v) != nil {
		return ""
	}
	s := v.ClientVersion.GitVersion
	if v.ClientVersion.GoVersion != "" {
		s += " (" + v.ClientVersion.GoVersion + ")"
	}
	return s
}

// orderFor rotates the tool list by round, so that every tool runs in every position.
func orderFor(names []string, round int) []string {
	out := make([]string, 0, len(names))
	for i := range names {
		out = append(out, names[(i+round)%len(names)])
	}
	return out
}
