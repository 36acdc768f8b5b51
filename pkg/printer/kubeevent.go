package printer

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// eventsResource is the resource column of KubeEvent lines.
const eventsResource = "events.events.k8s.io"

// writeOwners writes an owner chain on a human line: "  owners=Deployment/web>ReplicaSet/web-5fc9".
func writeOwners(b *strings.Builder, owners []watch.Owner) {
	if len(owners) == 0 {
		return
	}
	b.WriteString("  owners=")
	for i, o := range owners {
		if i > 0 {
			b.WriteByte('>')
		}
		b.WriteString(Escape(o.Kind + "/" + o.Name))
	}
}

// kubeEventDetail writes a KubeEvent line: the object it regards, its chain, then what
// happened; a Warning stands out.
func (p *Printer) kubeEventDetail(b *strings.Builder, ev *watch.Event) {
	k := ev.Kube
	if k == nil {
		k = &watch.KubeEventInfo{}
	}
	obj := k.Regarding.Kind + "/" + k.Regarding.Name
	if k.Regarding.Namespace != "" {
		obj = k.Regarding.Namespace + "/" + obj
	}
	b.WriteString(Escape(obj))
	writeOwners(b, ev.Obj.Owners)
	b.WriteString("  rv=" + Escape(ev.ResourceVersion))
	what := Escape(k.EventType + " " + k.Reason)
	if k.EventType == "Warning" {
		what = p.paint(colorRed, what)
	}
	b.WriteString("  " + what + ": " + Escape(k.Note))
	var by []string
	if k.ReportingController != "" {
		by = append(by, "by "+Escape(k.ReportingController))
	}
	if k.Count > 1 {
		by = append(by, fmt.Sprintf("x%d", k.Count))
	}
	if len(by) > 0 {
		b.WriteString("  (" + strings.Join(by, ", ") + ")")
	}
	if ev.Obj.InitialList {
		// Listed at start, so the line's time is not the Event's: say how long before it was.
		mark := "[initial list]"
		if !k.EventTime.IsZero() && !ev.Time.IsZero() {
			mark = "[initial list, " + duration.HumanDuration(max(ev.Time.Sub(k.EventTime), 0)) + " earlier]"
		}
		b.WriteString("  " + p.paint(colorDim, mark))
	}
}
