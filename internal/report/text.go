package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// kubeEventText words an Event about an object: `Warning BackOff: Back-off restarting failed
// container (by kubelet) x4`.
func kubeEventText(k *watch.KubeEventInfo) string {
	s := k.EventType + " " + k.Reason + ": " + k.Note
	if k.ReportingController != "" {
		s += " (by " + k.ReportingController + ")"
	}
	if k.Count > 1 {
		s += fmt.Sprintf(" x%d", k.Count)
	}
	return cut(s, 400)
}

// hotLoopText words a HotLoop or HotLoopEnded line for the history and the marker.
func hotLoopText(ev *watch.Event) string {
	h := ev.HotLoopInfo()
	if ev.Type == watch.HotLoopEnded {
		return printer.HotLoopEndedText(h)
	}
	s := fmt.Sprintf("HOT LOOP (%s", h.Reason)
	if h.Loop != "" {
		s += ", " + h.Loop
	}
	s += fmt.Sprintf("): %d updates in %s", h.Updates, h.Window.Round(time.Millisecond))
	if len(h.Managers) > 0 {
		s += " by " + strings.Join(h.Managers, ", ")
	}
	if len(h.Fields) > 0 {
		s += "; flipping: " + strings.Join(h.Fields, ", ")
	}
	if h.Suggestion != "" {
		s += ". " + h.Suggestion
	}
	return s
}

// markerText says what a marker is, for the hover and the marker list.
func markerText(ev *watch.Event, m string) string {
	res := ev.Resource.String()
	var s string
	switch m {
	case MarkerWatch:
		s = "watch started"
		if ev.ResourceVersion != "" {
			s += " from resourceVersion " + ev.ResourceVersion
		} else {
			s += " from now"
		}
		if ev.Lifecycle.SendInitialEvents {
			s += " (streaming list)"
		}
	case MarkerWatchClosed:
		s = "watch closed"
		if ev.Lifecycle.Reason != "" {
			s += ": " + ev.Lifecycle.Reason
		}
		if ev.ResourceVersion != "" {
			s += " (last resourceVersion " + ev.ResourceVersion + ")"
		}
	case MarkerError, MarkerScrapeError:
		s = "error"
		if ev.Lifecycle.Verb != "" {
			s = ev.Lifecycle.Verb + " error"
		}
		if m == MarkerScrapeError {
			s = "scrape failed"
		}
		s += " " + ev.Lifecycle.Reason + ": " + ev.Lifecycle.Message
	case MarkerRelist:
		c := ev.Lifecycle.Counts
		s = fmt.Sprintf("relist from resourceVersion %s to %s: %d added, %d updated, %d deleted, %d unchanged",
			ev.Lifecycle.FromResourceVersion, ev.ResourceVersion, c.Added, c.Updated, c.Deleted, c.Unchanged)
		if ev.Lifecycle.Reason != "" {
			s += " (" + ev.Lifecycle.Reason + ")"
		}
	case MarkerSynced:
		s = fmt.Sprintf("cache synced: %d objects in %s", ev.Lifecycle.Items, ev.Lifecycle.Duration)
	case MarkerHotLoop, MarkerHotLoopEnded:
		key := ev.Key
		if key == "" {
			key = ev.Namespace + "/" + ev.Name
		}
		s = key + ": " + hotLoopText(ev)
	}
	if res != "" && m != MarkerScrapeError {
		s = res + " " + s
	}
	return cut(s, 400)
}
