package controlplane

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ServerPID returns the process id of this control plane's etcd or kube-apiserver (exe is the
// binary's base name), or 0 when it is not running. Linux only (it reads /proc).
func (cp *ControlPlane) ServerPID(exe string) int {
	for _, pid := range ChildrenMentioning(cp.Dir) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		if argv0, _, _ := bytes.Cut(cmdline, []byte{0}); filepath.Base(string(argv0)) == exe {
			return pid
		}
	}
	return 0
}

// ChildrenMentioning returns the children of this process that lead their own process group
// and have s in their command line. Linux only (it reads /proc); elsewhere it is empty.
func ChildrenMentioning(s string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[1] != self || f[2] != e.Name() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// FreePort asks the kernel for a free port on 127.0.0.1.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct free ports on 127.0.0.1 (held open together so they differ).
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
