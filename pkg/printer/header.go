package printer

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// writeHeader widens the resource column for a run of several resources, then writes the
// Informer line as a comment (a reader of several runs' output sees where each begins).
func (p *Printer) writeHeader(ev *watch.Event) error {
	if ev.Lifecycle.Info != nil && (len(ev.Lifecycle.Info.Resources) > 1 || len(ev.Lifecycle.Info.OwnedResources) > 0 || ev.Lifecycle.Info.Events) {
		for _, r := range append(append([]discovery.Resource{}, ev.Lifecycle.Info.Resources...), ev.Lifecycle.Info.OwnedResources...) {
			p.resWidth = max(p.resWidth, utf8.RuneCountInString(Escape(r.String())))
		}
		if ev.Lifecycle.Info.Events {
			p.resWidth = max(p.resWidth, len(eventsResource))
		}
	}
	if p.opts.NoHeaders {
		return nil
	}
	line := headerLine(ev.Lifecycle.Info, p.opts.ShowSecrets)
	_, err := p.w.WriteString(p.paint(colorDim, Escape(line)) + "\n")
	return err
}

// headerLine is the comment line that opens human output: what is watched where, and how the
// informers were configured.
func headerLine(info *watch.InformerInfo, showSecrets bool) string {
	var res []string
	for _, r := range info.Resources {
		res = append(res, r.String())
	}
	line := fmt.Sprintf("# watching %s in %s; %s", strings.Join(res, ","), scopeOf(info), clientOf(info))
	line += wireOf(info)
	if info.PageSize > 0 {
		line += fmt.Sprintf(", page size %d", info.PageSize)
	}
	switch {
	case info.QPS < 0:
		line += ", no client-side rate limit"
	case info.QPS > 0:
		line += fmt.Sprintf(", client rate limit %g qps burst %d", info.QPS, info.Burst)
	}
	if info.LabelSelector != "" {
		line += ", selector " + info.LabelSelector
	}
	if info.FieldSelector != "" {
		line += ", field selector " + info.FieldSelector
	}
	if len(info.OwnedResources) > 0 {
		var owned []string
		for _, r := range info.OwnedResources {
			owned = append(owned, r.String())
		}
		line += "; and what they own: " + strings.Join(owned, ",")
	}
	if info.Events {
		line += "; with their Events"
	}
	if !showSecrets {
		for _, r := range info.Resources {
			if r.Group == "" && r.Resource == "secrets" {
				line += "; secret values redacted (--show-secrets to show)"
				break
			}
		}
	}
	return line
}

// scopeOf says where the informers watch.
func scopeOf(info *watch.InformerInfo) string {
	scope := "all namespaces"
	namespaced := false
	for _, r := range info.Resources {
		namespaced = namespaced || r.Namespaced
	}
	switch {
	case len(info.Resources) > 0 && !namespaced:
		scope = "the cluster (cluster-scoped)" // -n (or the kubeconfig's namespace) does not apply
	case info.Namespace != "":
		scope = "namespace " + info.Namespace
	}
	return scope
}

// clientOf says how client-go's informers run: their queue, streaming lists and resync.
func clientOf(info *watch.InformerInfo) string {
	streaming := "off"
	if info.WatchList {
		streaming = "on"
	}
	resync := "off"
	if info.ResyncPeriod > 0 {
		resync = info.ResyncPeriod.String()
	}
	queue := info.Queue
	if info.AtomicEvents {
		queue += " (atomic)"
	}
	if info.MetadataOnly {
		queue += ", metadata only"
	}
	if info.DropManagedFields {
		queue += ", managedFields dropped (no manager attribution)"
	}
	if info.ListMode != "" {
		streaming += " (--list-mode " + info.ListMode + ")"
	}
	return fmt.Sprintf("client-go %s, %s, streaming lists %s, resync %s", info.ClientGoVersion, queue, streaming, resync)
}

// wireOf says the wire format of the run's resources: ", wire protobuf" when they all use one,
// ", wire protobuf for pods, json for widgets.example.com" when they differ; "" when not known.
func wireOf(info *watch.InformerInfo) string {
	if len(info.Wires) == 0 {
		return ""
	}
	var order []string
	by := map[string][]string{}
	for _, r := range append(append([]discovery.Resource{}, info.Resources...), info.OwnedResources...) {
		name := r.String()
		w, ok := info.Wires[name]
		if !ok || slices.Contains(by[w], name) {
			continue
		}
		if len(by[w]) == 0 {
			order = append(order, w)
		}
		by[w] = append(by[w], name)
	}
	switch len(order) {
	case 0:
		return ""
	case 1:
		return ", wire " + order[0]
	}
	parts := make([]string, len(order))
	for i, w := range order {
		parts[i] = w + " for " + strings.Join(by[w], ",")
	}
	return ", wire " + strings.Join(parts, ", ")
}
