package printer

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// apiStatsDetail is the human ApiStats line.
func apiStatsDetail(b *strings.Builder, ev *watch.Event) {
	s := ev.Stats.API
	if s == nil {
		return
	}
	b.WriteString(APIFigures(s))
	if ev.Stats.Final {
		b.WriteString(" (at exit)")
	}
}

// APIFigures is one resource's API figures in a few words, for ApiStats lines, the summary and
// top's scan (a sum of every resource's).
func APIFigures(s *apistats.Snapshot) string {
	var reqs []string
	for _, q := range s.Requests {
		code := fmt.Sprint(q.Code)
		if q.Code == 0 {
			code = "no response"
		}
		reqs = append(reqs, fmt.Sprintf("%s %s×%d", q.Verb, code, q.Count))
	}
	if len(reqs) == 0 {
		reqs = []string{"none"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "requests %s; %d lists (%d streaming), %d pages", strings.Join(reqs, ", "), s.Lists, s.StreamingLists, s.ListPages)
	if s.LastListPages > 0 {
		fmt.Fprintf(&b, " (last list %d)", s.LastListPages)
	}
	fmt.Fprintf(&b, "; received %s", byteSize(s.BytesReceived))
	if s.BytesDecoded != s.BytesReceived {
		fmt.Fprintf(&b, " (%s decoded)", byteSize(s.BytesDecoded))
	}
	if m := s.Elapsed.Minutes(); m >= 1.0/60 {
		fmt.Fprintf(&b, ", %s/min", byteSize(int64(float64(s.BytesReceived)/m)))
	}
	fmt.Fprintf(&b, "; %d objects, %d bookmarks; %d watch streams (%d reconnects, %d open", s.Objects, s.Bookmarks, s.WatchStreams, s.Reconnects, s.WatchOpen)
	if s.WatchesClosed > 0 {
		fmt.Fprintf(&b, ", closed ones lived %s on average, %s at most",
			(s.WatchLivedTotal / time.Duration(s.WatchesClosed)).Round(time.Millisecond), s.WatchLivedMax.Round(time.Millisecond))
	}
	b.WriteString(")")
	fmt.Fprintf(&b, "; %d throttled (429)", s.Throttled)
	if s.RetryAfter > 0 {
		fmt.Fprintf(&b, " Retry-After up to %s", s.RetryAfter)
	}
	if s.ClientWaits > 0 {
		fmt.Fprintf(&b, "; client rate limiter delayed %d requests by %s in all, %s at most", s.ClientWaits, roundMs(s.ClientWait), roundMs(s.ClientWaitMax))
	}
	return Escape(b.String())
}

// byteSize is a byte count in B, KiB or MiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// apfText is a classification in words: `flow schema "x", priority level "y"`.
func apfText(a *apistats.APF) string {
	if a == nil {
		return ""
	}
	fs, pl := a.FlowSchema, a.PriorityLevel
	if fs == "" {
		fs = "uid " + a.FlowSchemaUID
	}
	if pl == "" {
		pl = "uid " + a.PriorityLevelUID
	}
	s := fmt.Sprintf("APF flow schema %q, priority level %q", fs, pl)
	if a.Note != "" {
		s += " (" + a.Note + ")"
	}
	return s
}

// exemptPriorityLevel is the API Priority and Fairness level that never queues or rejects.
const exemptPriorityLevel = "exempt"

// throttledDetail is the human Throttled line.
func throttledDetail(b *strings.Builder, ev *watch.Event) {
	switch ev.Lifecycle.Reason {
	case string(apistats.NoticeClientThrottled):
		fmt.Fprintf(b, "%s held back %s by the client-side rate limiter (--qps, --burst)", Escape(ev.Lifecycle.Verb), roundMs(ev.Lifecycle.Duration))
	default:
		fmt.Fprintf(b, "%s rejected with 429 Too Many Requests", Escape(ev.Lifecycle.Verb))
		if ev.Stats.RetryAfter > 0 {
			fmt.Fprintf(b, ", Retry-After %s", ev.Stats.RetryAfter)
		}
		switch {
		case ev.Stats.APF != nil && ev.Stats.APF.PriorityLevel == exemptPriorityLevel:
			// Requests of the exempt level are never queued or rejected by API Priority and
			// Fairness: the 429 came from something else the request went through.
			b.WriteString(", not by API Priority and Fairness (its " + Escape(apfText(ev.Stats.APF)) + " never rejects): a max-in-flight limit, a webhook or a proxy")
		case ev.Stats.APF != nil:
			b.WriteString(" by " + Escape(apfText(ev.Stats.APF)))
		}
		b.WriteString("; client-go retries it")
	}
}
