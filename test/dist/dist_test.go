// Package dist tests the release artifacts that `make dist` (goreleaser with .goreleaser.yaml,
// through hack/dist.sh) produces: it builds them for a test version into a temporary directory,
// checks the rendered krew manifest and every archive against the manifest and checksums.txt,
// installs this platform's archive with krew itself (`kubectl krew install --manifest --archive`,
// offline, into a temporary KREW_ROOT; krew validates the manifest), runs it as
// `kubectl informer` through kubectl's plugin lookup, and uninstalls it with krew.
//
// It needs the pinned goreleaser and krew: `make dist-test` (the end of `make e2e`) builds
// them (into ./bin, and hack/krew/build.sh into the cache) and passes them in GORELEASER and
// KREW (go test ./test/dist/ alone: GORELEASER=$(make -s goreleaser-path) KREW=$(hack/krew/build.sh)).
// DIST_PLATFORMS (platforms_test.go) says what it builds: host (make test) this machine's
// platform, the other four type-checked from source (typecheck_test.go); all (the default of a
// bare go test, and before a release) the five. A platform's compile from an empty build cache is
// about 4.5 CPU-minutes here; once cached the whole test takes well under a minute. `go test
// -short` skips the second (reproducibility) build.
package dist

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"
)

const (
	testVersion = "v0.99.0-disttest.1"
	pluginName  = "informer"
	binName     = "kubectl-informer"
	modulePath  = "github.com/kubectl-informer/kubectl-informer"
	releaseURL  = "https://github.com/kubectl-informer/kubectl-informer/releases/download/"
)

// targets are the platforms a release must cover, each by exactly one spec.platforms item.
var targets = [][2]string{
	{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"},
}

// knownPlatforms are the <os,arch> pairs checked for overlapping selectors: krew's list
// (validate-krew-manifest's allPlatforms) and the targets, plus a few more krew runs on.
var knownPlatforms = [][2]string{
	{"windows", "386"}, {"windows", "amd64"}, {"windows", "arm64"},
	{"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"}, {"linux", "ppc64le"}, {"linux", "s390x"},
	{"darwin", "386"}, {"darwin", "amd64"}, {"darwin", "arm64"},
}

// manifest is the release's krew manifest as plain data: krew itself reads and validates it
// (krew_test.go installs the release with it); the checks here are this project's own.
type manifest map[string]any

// str is the string at keys ("" when absent).
func (m manifest) str(keys ...string) string {
	v, _ := m.at(keys...).(string)
	return v
}

func (m manifest) at(keys ...string) any {
	var v any = map[string]any(m)
	for _, k := range keys {
		o, _ := v.(map[string]any)
		v = o[k]
	}
	return v
}

// platforms are spec.platforms.
func (m manifest) platforms() []platform {
	items, _ := m.at("spec", "platforms").([]any)
	out := make([]platform, 0, len(items))
	for _, it := range items {
		o, _ := it.(map[string]any)
		out = append(out, platform(o))
	}
	return out
}

// platform is one item of spec.platforms.
type platform map[string]any

func (p platform) uri() string    { return manifest(p).str("uri") }
func (p platform) sha256() string { return manifest(p).str("sha256") }
func (p platform) bin() string    { return manifest(p).str("bin") }

// selector is the item's selector (nil when it has none or it is not one).
func (p platform) selector() *metav1.LabelSelector {
	b, err := json.Marshal(p["selector"])
	if err != nil || p["selector"] == nil {
		return nil
	}
	var sel metav1.LabelSelector
	if json.Unmarshal(b, &sel) != nil {
		return nil
	}
	return &sel
}

var validSHA256 = regexp.MustCompile(`^[a-f0-9]{64}$`)

func TestDist(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	tool := goreleaser(t)
	host := hostOnly(t)
	commit, date := headCommit(t, root)
	out := filepath.Join(t.TempDir(), "dist")
	start := time.Now()
	log := runDist(t, root, tool, out, testVersion, host)
	t.Logf("make dist (DIST_PLATFORMS=%s) took %v:\n%s", map[bool]string{true: "host", false: "all"}[host], time.Since(start).Round(time.Second), log)

	manifestPath := filepath.Join(out, "krew", pluginName+".yaml")
	p := readManifest(t, manifestPath)
	t.Run("manifest", func(t *testing.T) { validateManifest(t, manifestPath, p) })
	t.Run("selectors", func(t *testing.T) {
		if !host {
			validateSelectors(t, p)
			return
		}
		_, platform := hostTarget(t)
		if pls := p.platforms(); len(pls) != 1 || !matches(pls[0].selector(), platform[0], platform[1]) {
			t.Errorf("DIST_PLATFORMS=host: the manifest's platforms are %v, want this machine's (%s/%s) alone", pls, platform[0], platform[1])
		}
	})

	sums := readChecksums(t, filepath.Join(out, "checksums.txt"))
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for i, pl := range p.platforms() {
		var goos, goarch string
		if sel := pl.selector(); sel != nil {
			goos, goarch = sel.MatchLabels["os"], sel.MatchLabels["arch"]
		}
		t.Run(fmt.Sprintf("platforms[%d]=%s_%s", i, goos, goarch), func(t *testing.T) {
			name := path.Base(pl.uri())
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatalf("archive of uri %s: %v", pl.uri(), err)
			}
			validateArchive(t, pl, goos, goarch, data, sums, license, stamp{commit, date})
		})
	}
	if len(sums) != len(p.platforms()) {
		t.Errorf("checksums.txt lists %d files, the manifest %d platforms", len(sums), len(p.platforms()))
	}

	t.Run("krew install", func(t *testing.T) {
		krewInstall(t, manifestPath, p, out, stamp{commit, date})
	})

	t.Run("krew.yaml at the top is what the release writes", func(t *testing.T) {
		checkCommittedManifest(t, filepath.Join(root, "krew.yaml"), manifestPath, host)
	})

	t.Run("reproducible", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: not building a second time")
		}
		again := filepath.Join(t.TempDir(), "dist")
		runDist(t, root, tool, again, testVersion, host)
		for _, f := range []string{"checksums.txt", "krew/informer.yaml"} {
			a, errA := os.ReadFile(filepath.Join(out, f))
			b, errB := os.ReadFile(filepath.Join(again, f))
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Errorf("%s differs between two runs for the same commit, date and version (%v, %v)", f, errA, errB)
			}
		}
	})
}

func TestDistRefusesBadVersions(t *testing.T) {
	root := moduleRoot(t)
	for _, v := range []string{"", "0.1.0", "v0.1", "version1", "v1.0.0-", "9e711b9-dirty"} {
		out := filepath.Join(t.TempDir(), "dist")
		// GORELEASER=false: should the check let a bad version through, the build fails too,
		// but without the one-line error this test wants.
		cmd := exec.Command(filepath.Join(root, "hack", "dist.sh"))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "VERSION="+v, "GORELEASER=false")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Errorf("VERSION=%q: want a non-zero exit, got %v", v, err)
			continue
		}
		if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "not a semantic version with a leading v") {
			t.Errorf("VERSION=%q: want a one-line error, got %q", v, msg)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("VERSION=%q: output directory created (%v)", v, err)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module "+modulePath+"\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root not found")
		}
		dir = parent
	}
}

// goreleaser is the pinned goreleaser `make e2e` passes in GORELEASER. Without it the test
// fails: a release check that does not run must not pass.
func goreleaser(t *testing.T) string {
	t.Helper()
	tool := os.Getenv("GORELEASER")
	if tool == "" {
		t.Fatal("GORELEASER is not set: run the test through make e2e, or make goreleaser and set it to bin/goreleaser-<version>")
	}
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("GORELEASER=%s: %v", tool, err)
	}
	return tool
}

// headCommit is what a snapshot stamps in: HEAD's short commit (-dirty when the tree is) and
// HEAD's commit time, also the archives' entry times.
func headCommit(t *testing.T, root string) (commit string, date time.Time) {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(b))
	}
	commit = git("rev-parse", "--short", "HEAD")
	if git("status", "--porcelain") != "" {
		commit += "-dirty"
	}
	date, err := time.Parse(time.RFC3339, git("log", "-1", "--format=%cI", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	return commit, date.UTC()
}

// runDist runs hack/dist.sh (what `make dist` runs) with the checked-in .goreleaser.yaml, but
// writing into out (and with host, building this machine's platform only): releaseConfig.
func runDist(t *testing.T, root, tool, out, version string, host bool) string {
	t.Helper()
	cfgCopy := filepath.Join(t.TempDir(), "goreleaser.yaml")
	if err := os.WriteFile(cfgCopy, releaseConfig(t, root, out, host), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	argv := []string{filepath.Join(root, "hack", "dist.sh"), "--config", cfgCopy, "--parallelism", "2"}
	// `go test ./test/...` runs this package beside test/e2e, whose API servers and timings
	// should not starve while five platforms compile: build at a lower priority.
	if nice, err := exec.LookPath("nice"); err == nil {
		argv = append([]string{nice, "-n", "10"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "VERSION="+version, "GORELEASER="+tool)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/dist.sh: %v\n%s", err, b)
	}
	return string(b)
}

func readManifest(t *testing.T, file string) manifest {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var p manifest
	if err := yaml.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, b)
	}
	return p
}

// validateManifest checks what this project expects of the manifest beyond krew's own
// validation (which kubectl krew install applies): krew-index's rules for the descriptions, the
// homepage, and the release's version.
func validateManifest(t *testing.T, file string, p manifest) {
	if ext := filepath.Ext(file); ext != ".yaml" {
		t.Errorf("manifest extension %q, krew wants .yaml", ext)
	}
	name := strings.TrimSuffix(filepath.Base(file), ".yaml")
	if p.str("metadata", "name") != name || name != pluginName {
		t.Errorf("metadata.name %q, file name %q; both must be %q", p.str("metadata", "name"), name, pluginName)
	}
	if sd := p.str("spec", "shortDescription"); len(sd) > 70 {
		t.Errorf("shortDescription %q: at most 70 characters (krew-index)", sd)
	}
	if strings.TrimSpace(p.str("spec", "description")) == "" {
		t.Error("no description")
	}
	for _, field := range []string{"description", "caveats"} {
		for _, line := range strings.Split(p.str("spec", field), "\n") {
			if len(line) > 80 && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("%s line longer than 80 characters: %q", field, line)
			}
		}
	}
	if h := p.str("spec", "homepage"); h != "https://github.com/kubectl-informer/kubectl-informer" {
		t.Errorf("homepage %q", h)
	}
	if v := p.str("spec", "version"); v != testVersion {
		t.Errorf("version %q, want %q", v, testVersion)
	}
}

func matches(sel *metav1.LabelSelector, goos, goarch string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set{"os": goos, "arch": goarch})
}

// validateSelectors: every item matches some platform, no platform is matched by two items
// (validate-krew-manifest), and each target is matched by exactly one.
func validateSelectors(t *testing.T, p manifest) {
	for i, pl := range p.platforms() {
		used := false
		for _, kp := range knownPlatforms {
			used = used || matches(pl.selector(), kp[0], kp[1])
		}
		if !used {
			t.Errorf("platforms[%d]'s selector %v matches no platform", i, pl["selector"])
		}
	}
	for _, kp := range knownPlatforms {
		var idx []int
		for i, pl := range p.platforms() {
			if matches(pl.selector(), kp[0], kp[1]) {
				idx = append(idx, i)
			}
		}
		if len(idx) > 1 {
			t.Errorf("platforms %v have overlapping selectors that select os=%s arch=%s", idx, kp[0], kp[1])
		}
	}
	for _, tg := range targets {
		n := 0
		for _, pl := range p.platforms() {
			if matches(pl.selector(), tg[0], tg[1]) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s/%s is matched by %d platforms, want 1", tg[0], tg[1], n)
		}
	}
	if len(p.platforms()) != len(targets) {
		t.Errorf("%d platforms, want %d", len(p.platforms()), len(targets))
	}
}

// readChecksums parses sha256sum output: "<64 hex>  <file>" lines, sorted by file.
func readChecksums(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^([a-f0-9]{64})  (\S+)$`)
	sums := map[string]string{}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("checksums.txt: line %q is not in sha256sum format", sc.Text())
		}
		sums[m[2]] = m[1]
		names = append(names, m[2])
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("checksums.txt is not sorted by file name: %v", names)
	}
	return sums
}

// validateArchive checks one platform's archive: its name and URI, its sha256 against the
// manifest and checksums.txt, its entries (the binary and LICENSE only, fixed owner and mtime)
// and the binary (format and architecture, static, built with -trimpath, CGO_ENABLED=0 and the
// version's ldflags).
// stamp is what the release build stamps into the binary besides the version.
type stamp struct {
	commit string
	date   time.Time
}

func validateArchive(t *testing.T, pl platform, goos, goarch string, data []byte, sums map[string]string, license []byte, st stamp) {
	ext := ".tar.gz"
	bin := binName
	if goos == "windows" {
		ext, bin = ".zip", binName+".exe"
	}
	name := fmt.Sprintf("%s_%s_%s_%s%s", binName, testVersion, goos, goarch, ext)
	if want := releaseURL + testVersion + "/" + name; pl.uri() != want {
		t.Errorf("uri %s, want %s", pl.uri(), want)
	}
	if pl.bin() != bin {
		t.Errorf("bin %q, want %q", pl.bin(), bin)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != pl.sha256() || got != sums[name] {
		t.Errorf("sha256 of %s is %s; manifest says %s, checksums.txt %s", name, got, pl.sha256(), sums[name])
	}
	entries, err := readArchive(name, data)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	if want := []string{"LICENSE", bin}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("%s holds %v, want %v", name, names, want)
	}
	if !bytes.Equal(entries["LICENSE"].data, license) {
		t.Errorf("%s: LICENSE differs from the repository's", name)
	}
	want := st.date
	for n, e := range entries {
		if !e.mtime.Equal(want) || e.uid != 0 || e.gid != 0 {
			t.Errorf("%s: %s has mtime %v, uid %d, gid %d; want %v, 0, 0", name, n, e.mtime, e.uid, e.gid, want)
		}
	}
	b, ok := entries[pl.bin()]
	if !ok {
		t.Fatalf("%s: bin %s is not in the archive", name, pl.bin())
	}
	if b.mode&0o111 != 0o111 {
		t.Errorf("%s: %s has mode %v, want executable", name, pl.bin(), b.mode)
	}
	checkBinary(t, b.data, goos, goarch, st)
}

type entry struct {
	data     []byte
	mode     os.FileMode
	mtime    time.Time
	uid, gid int
}

func readArchive(name string, data []byte) (map[string]entry, error) {
	entries := map[string]entry{}
	add := func(n string, e entry) error {
		if n != path.Clean(n) || path.IsAbs(n) || strings.HasPrefix(n, "../") || strings.Contains(n, `\`) {
			return fmt.Errorf("%s: unsafe entry name %q", name, n)
		}
		if _, dup := entries[n]; dup {
			return fmt.Errorf("%s: entry %q twice", name, n)
		}
		entries[n] = e
		return nil
	}
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, err
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
			if err := add(f.Name, entry{data: b, mode: f.Mode(), mtime: f.Modified}); err != nil {
				return nil, err
			}
		}
		return entries, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s: %s is not a regular file", name, h.Name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if err := add(h.Name, entry{data: b, mode: h.FileInfo().Mode(), mtime: h.ModTime, uid: h.Uid, gid: h.Gid}); err != nil {
			return nil, err
		}
	}
}

func checkBinary(t *testing.T, data []byte, goos, goarch string, st stamp) {
	t.Helper()
	r := bytes.NewReader(data)
	var hasDWARF bool
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			t.Fatalf("not an ELF binary: %v", err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want {
			t.Errorf("ELF machine %v, want %v", f.Machine, want)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				t.Error("dynamically linked (has PT_INTERP); want a static binary")
			}
		}
		if f.Section(".symtab") != nil {
			t.Error("binary has a symbol table: not built with -ldflags -s")
		}
		_, err = f.DWARF()
		hasDWARF = err == nil
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			t.Fatalf("not a Mach-O binary: %v", err)
		}
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want {
			t.Errorf("Mach-O cpu %v, want %v", f.Cpu, want)
		}
		_, err = f.DWARF()
		hasDWARF = err == nil
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			t.Fatalf("not a PE binary: %v", err)
		}
		if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
			t.Errorf("PE machine %#x, want amd64", f.Machine)
		}
		_, err = f.DWARF()
		hasDWARF = err == nil
	}
	bi, err := buildinfo.Read(r)
	if err != nil {
		t.Fatalf("build info: %v", err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for k, v := range map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[k] != v {
			t.Errorf("built with %s=%q, want %q", k, settings[k], v)
		}
	}
	// -trimpath keeps -ldflags out of the build info: look for -X's values and -s -w's effect.
	for _, x := range []string{testVersion, st.commit, st.date.Format(time.RFC3339)} {
		if !bytes.Contains(data, []byte(x)) {
			t.Errorf("binary lacks %q: not built with the release -ldflags -X", x)
		}
	}
	if hasDWARF {
		t.Error("binary has DWARF: not built with -ldflags -w")
	}
	if bi.Path != modulePath+"/cmd/kubectl-informer" {
		t.Errorf("main package %q", bi.Path)
	}
}

// checkCommittedManifest fails when the committed krew.yaml drifts from the manifest this
// release wrote: every field equal once the built one's test version is replaced by the
// committed one's, except the sha256 of each archive, which moves with every commit (the
// committed ones must still be sha256s, and are those of the release that wrote the file). With
// host (one platform built), the committed items of the others are checked against the one
// built (checkCommittedPlatforms) and the rest of the manifest as above.
func checkCommittedManifest(t *testing.T, committedPath, builtPath string, host bool) {
	t.Helper()
	// Equal to the release's manifest once stripped, the committed one passes its checks.
	committed := readManifest(t, committedPath)
	v := committed.str("spec", "version")
	builtYAML, err := os.ReadFile(builtPath)
	if err != nil {
		t.Fatal(err)
	}
	var built manifest
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(string(builtYAML), testVersion, v)), &built); err != nil {
		t.Fatal(err)
	}
	for _, pl := range committed.platforms() {
		if !validSHA256.MatchString(pl.sha256()) {
			t.Errorf("krew.yaml: %s: sha256 %q is not a sha256", pl.uri(), pl.sha256())
		}
	}
	strip := func(p manifest) {
		for _, pl := range p.platforms() {
			delete(pl, "sha256")
		}
	}
	if host {
		_, platform := hostTarget(t)
		one := built.platforms()
		if len(one) != 1 {
			t.Fatalf("DIST_PLATFORMS=host built %d platforms", len(one))
		}
		checkCommittedPlatforms(t, committed, one[0], platform)
		var kept []any
		for _, pl := range committed.platforms() {
			if matches(pl.selector(), platform[0], platform[1]) {
				kept = append(kept, map[string]any(pl))
			}
		}
		committed["spec"].(map[string]any)["platforms"] = kept
	}
	strip(committed)
	strip(built)
	if !reflect.DeepEqual(committed, built) {
		t.Errorf("krew.yaml drifted from what `make dist VERSION=%s` writes; run `make krew.yaml` and commit it\ncommitted: %+v\nrelease:   %+v", v, committed, built)
	}
}
