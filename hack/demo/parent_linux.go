package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent asks the kernel for a SIGTERM when the process that started the demo exits.
// `go run` ignores SIGINT (it leaves it to the terminal's process group) and dies of SIGTERM
// without passing either on: the demo, left running, kept its control plane (and its
// watchdog's pipe) alive. With this, a SIGTERM or SIGKILL to `go run` stops the cluster too.
func dieWithParent() {
	parent := os.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		return
	}
	if os.Getppid() != parent { // gone before the request
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
