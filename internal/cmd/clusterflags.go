package cmd

import (
	"context"
	"errors"
	"net/url"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/metadata"
)

// clusterFlagNames are the flags of genericclioptions.ConfigFlags: how to reach a cluster.
func clusterFlagNames() []string {
	fs := pflag.NewFlagSet("cluster", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// hideClusterFlags leaves the cluster flags out of cmd's help (replay and report read a file,
// never a cluster), but those named in keep (replay's -n filters the recording).
func hideClusterFlags(cmd *cobra.Command, keep ...string) {
	names := clusterFlagNames()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if slices.Contains(names, f.Name) && !slices.Contains(keep, f.Name) {
				f.Hidden = true
			}
		})
		c.Parent().HelpFunc()(c, args)
	})
}

// completeNamespaces completes -n with the cluster's namespaces, as kubectl does (never file
// names).
func completeNamespaces(configFlags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := completionFlags(configFlags).ToRESTConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		client, err := metadata.NewForConfig(cfg)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		list, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{Limit: 500})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, ns := range list.Items {
			if len(toComplete) <= len(ns.Name) && ns.Name[:len(toComplete)] == toComplete {
				out = append(out, ns.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// hintError is an error with a hint for the user, which ErrorLine keeps whatever it rewords.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + " (" + e.hint + ")" }
func (e *hintError) Unwrap() error { return e.err }

// kubeconfigHint says, of an error reaching the server, that no kubeconfig was found: client-go
// then falls back to localhost:8080, and "connection refused" alone does not say why.
func kubeconfigHint(err error, configFlags *genericclioptions.ConfigFlags) error {
	var uerr *url.Error
	if !errors.As(err, &uerr) || configFlags == nil || (configFlags.APIServer != nil && *configFlags.APIServer != "") ||
		os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return err
	}
	raw, rerr := configFlags.ToRawKubeConfigLoader().RawConfig()
	if rerr != nil || len(raw.Clusters) > 0 {
		return err
	}
	return &hintError{err: err, hint: "no kubeconfig found, so the client tried localhost:8080: set KUBECONFIG or --kubeconfig, or write ~/.kube/config"}
}
