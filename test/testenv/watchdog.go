package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A watchdog kills the cluster's processes if this process dies without calling Stop (a test
// binary killed by -timeout, a panic in a test run from TestMain, a demo killed by SIGKILL):
// etcd, kube-apiserver and the plugin run in process groups of their own, so nothing else
// would stop them.
//
// It is a small sh in its own session, reading a pipe whose only writer is this process, so
// it wakes at EOF when this process exits or Stop closes the pipe. It then kills, by process
// group id, the groups listed in Dir/pids, and removes the directories listed in Dir/rmdirs,
// and Dir. Stop removes Dir (and so both lists) before closing the pipe, so then it does
// nothing. Dir/pids holds the children of this process that lead a process group and whose
// command line mentions Dir (the servers' cert and data dirs, --kubeconfig of the plugin); it
// is rewritten after every start and stop. Linux only (it reads /proc); elsewhere the list
// stays empty.
const watchdogScript = `read -r _
if [ -f "$0/pids" ]; then for p in $(cat "$0/pids"); do kill -s KILL -- "-$p" 2>/dev/null; done; fi
if [ -f "$0/rmdirs" ]; then while IFS= read -r d; do rm -rf "$d"; done < "$0/rmdirs"; fi
rm -rf "$0"`

type watchdog struct {
	mu  sync.Mutex
	w   *os.File // write end; closing it (or exiting) wakes the watchdog
	cmd *exec.Cmd
	dir string
}

func startWatchdog(dir string) (*watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sh", "-c", watchdogScript, dir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	go func() { _ = cmd.Wait() }() // reap it after stop
	return &watchdog{w: w, cmd: cmd, dir: dir}, nil
}

// refresh rewrites the list of process groups to kill.
func (wd *watchdog) refresh() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	var b strings.Builder
	for _, pid := range childrenMentioning(wd.dir) {
		if pid == wd.cmd.Process.Pid {
			continue
		}
		b.WriteString(strconv.Itoa(pid) + "\n")
	}
	tmp := filepath.Join(wd.dir, "pids.tmp")
	if os.WriteFile(tmp, []byte(b.String()), 0o600) == nil {
		_ = os.Rename(tmp, filepath.Join(wd.dir, "pids"))
	}
}

// removeAlso makes the watchdog remove dirs too (directories envtest makes outside Dir).
func (wd *watchdog) removeAlso(dirs ...string) {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	var b strings.Builder
	for _, d := range dirs {
		if d != "" {
			b.WriteString(d + "\n")
		}
	}
	_ = os.WriteFile(filepath.Join(wd.dir, "rmdirs"), []byte(b.String()), 0o600)
}

// stop lets the watchdog exit; call it after removing dir.
func (wd *watchdog) stop() {
	if wd != nil {
		wd.w.Close()
	}
}
