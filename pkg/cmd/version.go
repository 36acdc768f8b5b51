package cmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// VersionInfo is what `kubectl informer version -o json` prints.
type VersionInfo struct {
	Version         string `json:"version"`
	Commit          string `json:"commit"`
	Date            string `json:"date"`
	ClientGoVersion string `json:"clientGoVersion"`
	GoVersion       string `json:"goVersion"`
	Platform        string `json:"platform"`
	ServerVersion   string `json:"serverVersion,omitempty"`
}

// NewCmdVersion returns `kubectl informer version`.
func NewCmdVersion(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, and the server's when reachable",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return fmt.Errorf("--output must be empty or json, got %q", output)
			}
			cmd.SilenceUsage = true
			v := VersionInfo{
				Version: Version, Commit: Commit, Date: Date,
				ClientGoVersion: depVersion("k8s.io/client-go"),
				GoVersion:       runtime.Version(),
				Platform:        runtime.GOOS + "/" + runtime.GOARCH,
			}
			if !clientOnly {
				if dc, err := configFlags.ToDiscoveryClient(); err == nil {
					if sv, err := dc.ServerVersion(); err == nil {
						v.ServerVersion = sv.GitVersion
					}
				}
			}
			if output == "json" {
				b, _ := json.Marshal(v)
				fmt.Fprintln(streams.Out, string(b))
				return nil
			}
			fmt.Fprintf(streams.Out, "kubectl-informer %s (commit %s, built %s)\nclient-go %s, %s, %s\n",
				v.Version, v.Commit, v.Date, v.ClientGoVersion, v.GoVersion, v.Platform)
			if v.ServerVersion != "" {
				fmt.Fprintf(streams.Out, "server %s\n", v.ServerVersion)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: empty or json.")
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Do not contact the server.")
	return cmd
}

func depVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}
