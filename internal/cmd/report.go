package cmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/kubectl/pkg/util/templates"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/internal/report"
)

const reportExample = `  # Record an incident, then make a report of it and open it in a browser
  kubectl informer watch deploy,rs,pods -n demo --record incident.ndjson
  kubectl informer report incident.ndjson -o incident.html

  # Straight from a watch (the report is written when the watch ends: Ctrl-C, --timeout)
  kubectl informer watch cm -A -o json --timeout 10m | kubectl informer report - -o cm.html

  # To standard output, for a pipe or a redirect
  kubectl informer report incident.ndjson > incident.html`

// ReportOptions holds the flags of `kubectl informer report`.
type ReportOptions struct {
	genericiooptions.IOStreams

	// Output is the HTML file to write; "" writes to stdout (not a terminal), "-" to stdout
	// whatever it is.
	Output string
	// AuditLog is --audit-log: the API server's audit log of the recorded time.
	AuditLog string

	file string
}

// NewReportOptions returns options with their defaults.
func NewReportOptions(streams genericiooptions.IOStreams) *ReportOptions {
	return &ReportOptions{IOStreams: streams}
}

// NewCmdReport returns `kubectl informer report`.
func NewCmdReport(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewReportOptions(streams)
	cmd := &cobra.Command{
		Use:   "report FILE [-o report.html]",
		Short: "Turn a recording into one self-contained HTML page: timeline, markers, queues, objects",
		Long: templates.LongDesc(`Turn a recording made with 'kubectl informer watch --record FILE' (or saved '-o json'
output) into one HTML page that loads nothing from anywhere: it opens from a mail attachment
or a ticket. It shows events per second per resource by where they came from (watch, initial
list, relist, resync), markers for watch restarts and closes, errors, relists, syncs, hot
loops and failed scrapes, the simulated and the scraped queues' depth over time, the objects
that changed most with who wrote them, each one's history, the exit summary and the
recording's header. FILE '-' reads standard input. The cluster is not contacted.

Without -o the page goes to standard output, unless that is a terminal ('-o -' forces it).
A damaged line is left out and said on stderr (exit 1, the report is still written); input
that is not a recording writes nothing. See docs/report.md.`),
		Example: templates.Examples(reportExample),
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("you must specify a recording (e.g. 'kubectl informer report demo.ndjson -o demo.html'); see 'kubectl informer report -h' for help and examples")
			case len(args) > 1:
				return fmt.Errorf("too many arguments %q: report takes one FILE", args)
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: runE(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Write the HTML page to this file (created or truncated); '-' for standard output even when it is a terminal. Default: standard output, unless it is a terminal.")
	cmd.Flags().StringVar(&o.AuditLog, "audit-log", o.AuditLog, "The API server's audit log (a file) of the recorded time: each write in an object's history says who made it (user, service account).")
	return cmd
}

// Complete takes the arguments.
func (o *ReportOptions) Complete(_ *cobra.Command, args []string) error {
	o.file = args[0]
	return nil
}

// Validate checks the arguments before anything is read.
func (o *ReportOptions) Validate() error {
	if strings.TrimSpace(o.file) == "" {
		return errors.New("you must specify a recording")
	}
	if o.Output == "" && isTerminal(o.Out) {
		return errors.New("refusing to write HTML to a terminal: give a file with -o report.html, redirect standard output, or force it with -o -")
	}
	if o.Output != "" && o.Output != "-" && o.file != "-" {
		if a, b := filepath.Clean(o.Output), filepath.Clean(o.file); a == b {
			return fmt.Errorf("-o %s would overwrite the recording", o.Output)
		}
	}
	return nil
}

// Run writes the page of the recording (internal/report).
func (o *ReportOptions) Run(ctx context.Context) error {
	return report.Run(ctx, report.Config{File: o.file, In: o.In, Out: o.Out, ErrOut: o.ErrOut, Output: o.Output, AuditLog: o.AuditLog})
}
