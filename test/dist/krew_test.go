package dist

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// krew is the pinned krew (hack/krew/build.sh) `make dist-test` passes in KREW. Without it the
// test fails: an install check that does not run must not pass.
func krew(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("KREW")
	if bin == "" {
		t.Fatal("KREW is not set: run the test through make dist-test, or set it to the path hack/krew/build.sh prints")
	}
	if filepath.Base(bin) != "kubectl-krew" {
		t.Fatalf("KREW=%s: kubectl finds krew as a plugin only under the name kubectl-krew", bin)
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("KREW=%s: %v", bin, err)
	}
	return bin
}

// krewInstall installs this machine's archive of the release with krew itself, offline, into a
// temporary KREW_ROOT (`kubectl krew install --manifest --archive`: krew validates the manifest,
// picks the platform, checks the archive's sha256, unpacks it and links its bin), runs it as
// `kubectl informer` through kubectl's plugin lookup, and uninstalls it with krew.
func krewInstall(t *testing.T, manifestPath string, p manifest, out string, st stamp) {
	var archive string
	for _, pl := range p.platforms() {
		if matches(pl.selector(), runtime.GOOS, runtime.GOARCH) {
			archive = filepath.Join(out, path.Base(pl.uri()))
		}
	}
	if archive == "" {
		t.Skipf("no platform for this machine's %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	krewBin := krew(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is not on PATH: the plugin is installed and run through kubectl")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is not on PATH: krew keeps its plugin index in git")
	}
	krewRoot, home := t.TempDir(), t.TempDir()
	kubeconfig := filepath.Join(home, "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Only krew's bin, krew, kubectl and git: no other kubectl-informer on PATH to find.
	pathEnv := strings.Join([]string{filepath.Join(krewRoot, "bin"), filepath.Dir(krewBin), filepath.Dir(kubectl), filepath.Dir(git)}, string(os.PathListSeparator))
	env := append(os.Environ(), "PATH="+pathEnv, "HOME="+home, "KUBECONFIG="+kubeconfig, "KREW_ROOT="+krewRoot,
		"KREW_NO_UPGRADE_CHECK=1", "GIT_CONFIG_NOSYSTEM=1")
	run := func(wantOK bool, argv ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); (err == nil) != wantOK {
			t.Fatalf("%s: %v (want success: %v)\nstdout: %s\nstderr: %s", strings.Join(argv, " "), err, wantOK, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	_, stderr := run(true, "kubectl", "krew", "install", "--manifest="+manifestPath, "--archive="+archive)
	if !strings.Contains(stderr, "Installed plugin: informer") {
		t.Errorf("kubectl krew install says:\n%s", stderr)
	}
	link := filepath.Join(krewRoot, "bin", "kubectl-"+pluginName)
	if target, err := filepath.EvalSymlinks(link); err != nil || !strings.HasPrefix(target, filepath.Join(krewRoot, "store", pluginName, testVersion)+string(filepath.Separator)) {
		t.Errorf("krew's link %s points to %q (%v), want the release's version in the store", link, target, err)
	}

	stdout, _ := run(true, "kubectl", "informer", "version", "--client", "-o", "json")
	var v struct {
		Version, Commit, Date, ClientGoVersion, GoVersion, Platform string
		ServerVersion                                               *string
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("version -o json: %v: %q", err, stdout)
	}
	if v.Version != testVersion || v.Commit != st.commit || v.Date != st.date.Format(time.RFC3339) ||
		v.Platform != runtime.GOOS+"/"+runtime.GOARCH || !strings.HasPrefix(v.ClientGoVersion, "v0.") ||
		!strings.HasPrefix(v.GoVersion, "go1.") || v.ServerVersion != nil {
		t.Errorf("kubectl informer version --client -o json: %s", stdout)
	}
	// Without --client and with an empty kubeconfig: the plugin's version, and a note.
	stdout, stderr = run(true, "kubectl", "informer", "version")
	if !strings.HasPrefix(stdout, "kubectl-informer "+testVersion+" (commit "+st.commit+", built "+st.date.Format(time.RFC3339)+")\n") ||
		!strings.HasPrefix(stderr, "server version unavailable: ") {
		t.Errorf("kubectl informer version:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
	if stdout, _ = run(true, "kubectl", "informer", "--help"); !strings.Contains(stdout, "watch") {
		t.Errorf("kubectl informer --help lists no watch command:\n%s", stdout)
	}
	stdout, stderr = run(true, "kubectl", "plugin", "list")
	if !strings.Contains("\n"+stdout, "\n"+link+"\n") {
		t.Errorf("kubectl plugin list does not list %s:\nstdout: %s\nstderr: %s", link, stdout, stderr)
	}

	// krew's uninstall wants a plugin index: a local one (a git repository holding the release's
	// manifest), added as krew adds any, so nothing is fetched.
	index := filepath.Join(t.TempDir(), "index")
	manifestYAML, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(index, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(index, "plugins", pluginName+".yaml"), manifestYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	ident := []string{"-c", "user.name=test", "-c", "user.email=test@example.com"}
	run(true, "git", "-C", index, "init", "-q")
	run(true, "git", "-C", index, "add", ".")
	run(true, append(append([]string{"git", "-C", index}, ident...), "commit", "-q", "-m", "index")...)
	run(true, "kubectl", "krew", "index", "add", "default", index)
	if stdout, _ = run(true, "kubectl", "krew", "info", pluginName); !strings.Contains(stdout, "VERSION: "+testVersion) {
		t.Errorf("kubectl krew info %s (the index's manifest, read and validated by krew):\n%s", pluginName, stdout)
	}

	_, stderr = run(true, "kubectl", "krew", "uninstall", pluginName)
	if !strings.Contains(stderr, "Uninstalled plugin: informer") {
		t.Errorf("kubectl krew uninstall says:\n%s", stderr)
	}
	for _, gone := range []string{link, filepath.Join(krewRoot, "store", pluginName), filepath.Join(krewRoot, "receipts", pluginName+".yaml")} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after kubectl krew uninstall (%v)", gone, err)
		}
	}
	if _, stderr = run(false, "kubectl", "informer", "version", "--client"); !strings.Contains(stderr, "unknown command") {
		t.Errorf("kubectl informer after uninstall: %s", stderr)
	}
}
