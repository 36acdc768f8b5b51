package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

const completionLong = `Print a shell completion script for kubectl-informer.

Through kubectl (1.26 or later), "kubectl informer <TAB>" completes by running the
kubectl_complete-informer script from the repository (or the release archive) found on PATH;
no script from this command is needed for that. This command's scripts complete the
kubectl-informer executable when it is run directly.

  # bash (needs the bash-completion package)
  source <(kubectl-informer completion bash)

  # zsh
  kubectl-informer completion zsh > "${fpath[1]}/_kubectl-informer"

  # fish
  kubectl-informer completion fish > ~/.config/fish/completions/kubectl-informer.fish

  # PowerShell
  kubectl-informer completion powershell | Out-String | Invoke-Expression`

// NewCmdCompletion returns `kubectl informer completion bash|zsh|fish|powershell`.
func NewCmdCompletion(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:                   "completion bash|zsh|fish|powershell",
		Short:                 "Print a shell completion script",
		Long:                  completionLong,
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The scripts complete the executable, kubectl-informer, and call it for candidates.
			root := cmd.Root()
			use := root.Use
			root.Use = "kubectl-informer"
			defer func() { root.Use = use }()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			default:
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
		},
	}
}

// completionTimeout bounds the requests completion may make (a stale discovery cache, object
// names) when --request-timeout is not given: a TAB must not hang on an unreachable server.
const completionTimeout = 3 * time.Second

func completionFlags(configFlags *genericclioptions.ConfigFlags) *genericclioptions.ConfigFlags {
	if configFlags.Timeout == nil || *configFlags.Timeout == "" || *configFlags.Timeout == "0" {
		t := completionTimeout.String()
		configFlags.Timeout = &t
	}
	return configFlags
}

// completeWatchArgs completes watch's arguments: resource names from the discovery cache
// (comma lists too), then object names (NAME, or RESOURCE/NAME) from the server, bounded.
func completeWatchArgs(configFlags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		flags := completionFlags(configFlags)
		switch {
		case len(args) == 0 && strings.Contains(toComplete, "/"):
			resource, prefix, _ := strings.Cut(toComplete, "/")
			var out []cobra.Completion
			for _, n := range objectNames(flags, resource, prefix) {
				out = append(out, resource+"/"+n)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case len(args) == 0:
			done, last := "", toComplete
			if i := strings.LastIndex(toComplete, ","); i >= 0 {
				done, last = toComplete[:i+1], toComplete[i+1:]
			}
			already := sets.New(strings.Split(done, ",")...)
			var out []cobra.Completion
			for _, n := range resourceNames(flags) {
				if strings.HasPrefix(n, last) && !already.Has(n) {
					out = append(out, done+n)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case len(args) == 1 && !strings.ContainsAny(args[0], "/,"):
			return objectNames(flags, args[0], toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// resourceNames lists what `kubectl api-resources -o name` would, less what cannot be listed
// and watched: `configmaps`, `deployments.apps`. It reads the discovery cache (kubectl's own,
// ~/.kube/cache/discovery), going to the server only when the cache is stale.
func resourceNames(configFlags *genericclioptions.ConfigFlags) []string {
	dc, err := configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	lists, _ := dc.ServerPreferredResources() // partial results on a group's failure
	return shellSafe(discovery.WatchableNames(lists))
}

// objectNames lists the names, starting with prefix, of a resource's objects in the namespace
// -n or the kubeconfig names. Any failure (an unknown resource, an unreachable server) gives no
// candidates.
func objectNames(configFlags *genericclioptions.ConfigFlags, resourceArg, prefix string) []string {
	dc, err := configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	res, err := discovery.NewResolver(dc, nil).Resolve(resourceArg)
	if err != nil {
		return nil
	}
	cfg, err := configFlags.ToRESTConfig()
	if err != nil {
		return nil
	}
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	var list *metav1.PartialObjectMetadataList
	if res.Namespaced {
		ns, _, err := configFlags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil
		}
		list, err = client.Resource(res.GVR()).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 500})
		if err != nil {
			return nil
		}
	} else if list, err = client.Resource(res.GVR()).List(ctx, metav1.ListOptions{Limit: 500}); err != nil {
		return nil
	}
	var out []string
	for _, o := range list.Items {
		if strings.HasPrefix(o.Name, prefix) {
			out = append(out, o.Name)
		}
	}
	return shellSafe(out)
}

// shellSafe keeps the candidates a shell can insert as they are: a name from the server with a
// control character (a terminal escape), a space or a shell metacharacter (`;`, `$(`, a
// backtick: path-segment names allow them) is left out; the user can still type it quoted.
func shellSafe(names []string) []string {
	out := names[:0]
	for _, n := range names {
		if n != "" && !strings.ContainsFunc(n, func(r rune) bool {
			plain := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._:@+=,%/~", r)
			return !plain
		}) {
			out = append(out, n)
		}
	}
	return out
}
