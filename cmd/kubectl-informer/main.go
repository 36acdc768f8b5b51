// Command kubectl-informer is the kubectl plugin `kubectl informer`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/internal/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A reader that went away (| head) must end the run through the write error, exit 0: without
	// this, Go's runtime kills a process that writes to a closed stdout with SIGPIPE (exit 141).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// A lower garbage-collector target than Go's default, unless GOGC says otherwise: a watch's
	// peak memory is mostly garbage of the initial list (cmd.DefaultGCPercent).
	cmd.TuneGC(os.Getenv)
	cmd.TuneMemProfile(os.Getenv)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := cmd.NewCmdInformer(streams).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, cmd.ErrorLine(err))
		stop()
		os.Exit(1)
	}
}
