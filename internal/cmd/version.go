package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"k8s.io/kubectl/pkg/util/templates"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// serverVersionTimeout bounds the server version lookup unless --request-timeout is given, so
// that `kubectl informer version` answers promptly when the cluster is down or unreachable.
var serverVersionTimeout = 5 * time.Second

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
		Long: templates.LongDesc(`Print the plugin's version, commit and build date, the client-go and Go versions it was
built with, its platform, and the API server's version when the server answers within 5s
(or --request-timeout). With --client the server is not contacted.`),
		Example: templates.Examples(`
  kubectl informer version
  kubectl informer version --client -o json`),
		Args: cobra.NoArgs,
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
			var serverErr error
			if !clientOnly {
				v.ServerVersion, serverErr = serverVersion(configFlags)
			}
			if output == "json" {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(streams.Out, string(b))
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "kubectl-informer %s (commit %s, built %s)\nclient-go %s, %s, %s\n",
				v.Version, v.Commit, v.Date, v.ClientGoVersion, v.GoVersion, v.Platform)
			if v.ServerVersion != "" {
				// The server's own words: escaped, as any text from it (a hostile or intercepted
				// server could send a terminal escape).
				fmt.Fprintf(&b, "server %s\n", printer.Escape(v.ServerVersion))
			}
			if _, err := io.WriteString(streams.Out, b.String()); err != nil {
				return err
			}
			if serverErr != nil {
				// Not a failure of the command: the plugin's own version was printed.
				fmt.Fprintln(streams.ErrOut, "server version unavailable: "+strings.TrimPrefix(ErrorLine(serverErr), "error: "))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: empty or json.")
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Do not contact the server.")
	return cmd
}

// serverVersion asks the API server of configFlags for its version, within serverVersionTimeout
// unless --request-timeout sets another bound. It uses a plain discovery client: no disk cache.
func serverVersion(configFlags *genericclioptions.ConfigFlags) (string, error) {
	if err := checkKubeconfig(configFlags); err != nil {
		return "", err
	}
	cfg, err := configFlags.ToRESTConfig()
	if err != nil {
		return "", err
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = serverVersionTimeout
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		return "", err
	}
	return sv.GitVersion, nil
}

// depVersion is the version of module path in the binary's build info.
func depVersion(path string) string { return watch.ModuleVersion(path) }
