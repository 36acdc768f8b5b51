package top

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
)

// maxUserAgent is how much of a user agent a table shows (the JSON lines keep it whole).
const maxUserAgent = 48

// WriteAPIText writes who hit the API server by the audit log (--audit-log): the clients, the
// verbs on resources and the costliest LISTs, at most limit rows each (0: all); nothing without
// an audit log.
func WriteAPIText(w io.Writer, r *audit.LoadRanking, limit int) error {
	if r == nil {
		return nil
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "\nAPI requests by the audit log: %d (%.1f/s) in the last %s to %s, %d reads, %d writes, %d throttled (429), %d failed (5xx)\n",
		r.Total.Requests, r.Total.Rate, r.Window.Round(1e9), r.At.Local().Format("15:04:05"), r.Total.Reads, r.Total.Writes, r.Total.Throttled, r.Total.Failed)
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tUSER\tUSER AGENT\tREQUESTS/S\tREQUESTS\tREADS\tWRITES\t429\t5XX")
	for i, c := range r.Clients {
		if limit > 0 && i >= limit {
			break
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.1f\t%d\t%d\t%d\t%d\t%d\n", i+1, printer.Escape(userName(c.User)), printer.Escape(short(c.UserAgent, maxUserAgent)),
			c.Rate, c.Requests, c.Reads, c.Writes, c.Throttled, c.Failed)
	}
	_ = tw.Flush()
	buf.WriteString("\n")
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERB\tRESOURCE\tREQUESTS/S\tREQUESTS\t429\t5XX")
	for i, v := range r.VerbResources {
		if limit > 0 && i >= limit {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%d\t%d\n", printer.Escape(v.Verb), printer.Escape(v.Resource), v.Rate, v.Requests, v.Throttled, v.Failed)
	}
	_ = tw.Flush()
	if len(r.Heavy) > 0 {
		buf.WriteString("\ncostliest LISTs (from etcd without a resourceVersion, across all namespaces, or unpaginated):\n")
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "USER\tUSER AGENT\tRESOURCE\tLISTS/S\tLISTS\tCOST")
		for i, h := range r.Heavy {
			if limit > 0 && i >= limit {
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%d\t%s\n", printer.Escape(userName(h.Client.User)), printer.Escape(short(h.Client.UserAgent, maxUserAgent)),
				printer.Escape(h.Resource), h.Rate, h.Requests, strings.Join(costs(h.HeavyList), ", "))
		}
		_ = tw.Flush()
	}
	writeThrottles(&buf, r.Throttles, limit)
	_, err := w.Write(buf.Bytes())
	return err
}

// writeThrottles writes the 429s by priority level: the audit log does not name it, the
// cluster's FlowSchemas do (read at the start; "(unknown)" when they could not be).
func writeThrottles(buf *bytes.Buffer, ts []audit.ThrottleLoad, limit int) {
	if len(ts) == 0 {
		return
	}
	buf.WriteString("\nthrottled (429), by the priority level the cluster's FlowSchemas put the requests in:\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PRIORITY LEVEL\tFLOW SCHEMA\tUSER\tUSER AGENT\t429/S\t429")
	unknown := func(s string) string {
		if s == "" {
			return "(unknown)"
		}
		return s
	}
	for i, t := range ts {
		if limit > 0 && i >= limit {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%d\n", printer.Escape(unknown(t.PriorityLevel)), printer.Escape(unknown(t.FlowSchema)),
			printer.Escape(userName(t.User)), printer.Escape(short(t.UserAgent, maxUserAgent)), t.Rate, t.Requests)
	}
	_ = tw.Flush()
}

// userName shows a service account as sa:NAMESPACE/NAME.
func userName(u string) string {
	if sa := audit.ServiceAccount(u); sa != "" {
		return "sa:" + sa
	}
	return u
}

// short cuts s to at most n bytes, at a character's start.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// costs names what makes a LIST costly.
func costs(h audit.HeavyList) []string {
	var out []string
	if h.NoRV {
		out = append(out, "from etcd (no resourceVersion)")
	}
	if h.ClusterWide {
		out = append(out, "all namespaces")
	}
	if h.Unpaginated {
		out = append(out, "unpaginated")
	}
	return out
}

// JSON lines of --audit-log (docs/json.md): TopClient per client, TopVerb per verb and
// resource, TopHeavyList per costly LIST.

type apiFigures struct {
	Requests  int     `json:"requests"`
	Rate      float64 `json:"rate"`
	Reads     int     `json:"reads"`
	Writes    int     `json:"writes"`
	Throttled int     `json:"throttled"`
	Failed    int     `json:"failed"`
}

type apiHead struct {
	Type    string  `json:"type"`
	Time    string  `json:"time"`
	AuditAt string  `json:"auditTime"`
	Rank    int     `json:"rank"`
	Window  float64 `json:"windowSeconds"`
	Final   bool    `json:"final,omitempty"`
}

type clientRecord struct {
	apiHead
	User           string `json:"user"`
	ServiceAccount string `json:"serviceAccount,omitempty"`
	UserAgent      string `json:"userAgent"`
	apiFigures
}

type verbRecord struct {
	apiHead
	Verb     string `json:"verb"`
	Resource string `json:"resource"`
	apiFigures
}

type heavyRecord struct {
	apiHead
	User            string `json:"user"`
	UserAgent       string `json:"userAgent"`
	Resource        string `json:"resource"`
	AllNamespaces   bool   `json:"allNamespaces"`
	ResourceVersion bool   `json:"resourceVersion"`
	Paginated       bool   `json:"paginated"`
	apiFigures
}

type throttleRecord struct {
	apiHead
	User          string `json:"user"`
	UserAgent     string `json:"userAgent"`
	FlowSchema    string `json:"flowSchema,omitempty"`
	PriorityLevel string `json:"priorityLevel,omitempty"`
	apiFigures
}

func figuresOf(f audit.Figures) apiFigures {
	return apiFigures{Requests: f.Requests, Rate: round(f.Rate), Reads: f.Reads, Writes: f.Writes, Throttled: f.Throttled, Failed: f.Failed}
}

// WriteAPIJSON writes a ranking's API lines (--audit-log), at most limit of each type (0: all).
func WriteAPIJSON(w io.Writer, r Ranking, limit int, final bool) error {
	if r.API == nil {
		return nil
	}
	enc := json.NewEncoder(w)
	a := r.API
	head := func(typ string, i int) apiHead {
		return apiHead{Type: typ, Time: r.At.UTC().Format(recording.TimeFormat), AuditAt: a.At.UTC().Format(recording.TimeFormat),
			Rank: i + 1, Window: a.Window.Seconds(), Final: final}
	}
	more := func(i int) bool { return limit <= 0 || i < limit }
	for i, c := range a.Clients {
		if !more(i) {
			break
		}
		if err := enc.Encode(clientRecord{apiHead: head("TopClient", i), User: c.User, ServiceAccount: audit.ServiceAccount(c.User), UserAgent: c.UserAgent, apiFigures: figuresOf(c.Figures)}); err != nil {
			return err
		}
	}
	for i, v := range a.VerbResources {
		if !more(i) {
			break
		}
		if err := enc.Encode(verbRecord{apiHead: head("TopVerb", i), Verb: v.Verb, Resource: v.Resource, apiFigures: figuresOf(v.Figures)}); err != nil {
			return err
		}
	}
	for i, t := range a.Throttles {
		if !more(i) {
			break
		}
		if err := enc.Encode(throttleRecord{apiHead: head("TopThrottled", i), User: t.User, UserAgent: t.UserAgent,
			FlowSchema: t.FlowSchema, PriorityLevel: t.PriorityLevel, apiFigures: figuresOf(t.Figures)}); err != nil {
			return err
		}
	}
	for i, h := range a.Heavy {
		if !more(i) {
			break
		}
		if err := enc.Encode(heavyRecord{apiHead: head("TopHeavyList", i), User: h.Client.User, UserAgent: h.Client.UserAgent, Resource: h.Resource,
			AllNamespaces: h.ClusterWide, ResourceVersion: !h.NoRV, Paginated: !h.Unpaginated, apiFigures: figuresOf(h.Figures)}); err != nil {
			return err
		}
	}
	return nil
}
