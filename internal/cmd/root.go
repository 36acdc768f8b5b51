// Package cmd holds the cobra commands of kubectl-informer and their options. It is the only
// package that imports cobra and pflag.
package cmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"

	"k8s.io/kubectl/pkg/util/templates"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/kubectl-informer/kubectl-informer/internal/readonly"
	"github.com/kubectl-informer/kubectl-informer/internal/redact"
)

// Build information, set with -ldflags -X at release time.
var (
	Version = "dev"
	Commit  = "none"
	Date    = "unknown"
)

// runner is a command's options, run as kubectl's commands run theirs: Complete (flags and
// arguments into a typed config; the I/O it needs), Validate (pure), Run.
type runner interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE is the RunE of a command whose options are o.
func runE(o runner) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

// NewCmdInformer returns the root command, `kubectl informer`.
func NewCmdInformer(streams genericiooptions.IOStreams) *cobra.Command {
	configFlags := newConfigFlags()
	cmd := &cobra.Command{
		Use:   "informer",
		Short: "See what a controller's informer receives, live",
		Long: templates.LongDesc(`kubectl informer shows, one line per event, what a client-go informer receives:
adds, updates and deletes with their resourceVersions and where each came from
(initial list, watch, relist, resync), tombstones, bookmarks and watch restarts.`),
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl informer",
		},
		// Errors are one line, printed by main; -h shows usage.
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return setupLogging(cmd)
		},
	}
	flags := cmd.PersistentFlags()
	configFlags.AddFlags(flags)
	addKlogFlags(cmd)

	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w; see '%s -h' for help and examples", err, c.CommandPath())
	})
	if err := cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(configFlags)); err != nil {
		panic(err)
	}
	cmd.AddCommand(NewCmdWatch(configFlags, streams))
	cmd.AddCommand(NewCmdVersion(configFlags, streams))
	replay, report := NewCmdReplay(configFlags, streams), NewCmdReport(streams)
	hideClusterFlags(replay, "namespace")
	hideClusterFlags(report)
	cmd.AddCommand(replay)
	cmd.AddCommand(NewCmdReenact(configFlags, streams))
	cmd.AddCommand(report)
	cmd.AddCommand(NewCmdTop(configFlags, streams))
	cmd.AddCommand(NewCmdCompletion(streams))
	return cmd
}

// newConfigFlags returns kubectl's connection flags, with every request of every command sent
// through internal/readonly's check: reads only, unless the command permits a named write
// (readonly.Permit) from its flags.
func newConfigFlags() *genericclioptions.ConfigFlags {
	configFlags := genericclioptions.NewConfigFlags(true)
	configFlags.WrapConfigFn = readonly.Wrap
	return configFlags
}

var (
	klogFlags = flag.NewFlagSet("klog", flag.ContinueOnError)
	klogOnce  sync.Once
)

// addKlogFlags exposes klog's -v and --vmodule, as kubectl does; other klog flags stay hidden.
func addKlogFlags(cmd *cobra.Command) {
	klogOnce.Do(func() { klog.InitFlags(klogFlags) }) // once per process: tests build several roots
	for _, name := range []string{"v", "vmodule"} {
		f := klogFlags.Lookup(name)
		cmd.PersistentFlags().AddGoFlag(f)
	}
	cmd.PersistentFlags().Lookup("v").Shorthand = "v"
}

// setupLogging sends client-go's klog output nowhere unless -v asks for it, so that a user sees
// the plugin's own one-line errors and events, not reflector log spam.
func setupLogging(cmd *cobra.Command) error {
	level := 0
	if f := cmd.Flags().Lookup("v"); f != nil {
		level, _ = strconv.Atoi(f.Value.String())
	}
	// Every log call, at every -v, goes through the redaction: client-go writes a port-forward
	// tunnel's raw bytes at -v=7 (a plain-HTTP scrape's Authorization header) and full URLs.
	klog.SetLogFilter(redact.LogFilter{})
	if level <= 0 {
		klog.SetLogger(logr.Discard())
		klog.SetOutput(io.Discard)
		klog.LogToStderr(false)
		return nil
	}
	// klog's text format, written through a masking writer: the last net, for what klog
	// formats without the filter (an ErrorS call's error).
	cfg := textlogger.NewConfig(textlogger.Verbosity(level), textlogger.Output(redact.Writer{W: cmd.ErrOrStderr()}))
	if f := cmd.Flags().Lookup("vmodule"); f != nil && f.Value.String() != "" {
		if err := cfg.VModule().Set(f.Value.String()); err != nil {
			return fmt.Errorf("--vmodule: %w", err)
		}
	}
	klog.SetLogger(textlogger.NewLogger(cfg))
	return nil
}
