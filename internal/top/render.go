package top

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/shell"
)

// Table names the three tables of a ranking.
type Table string

// The tables.
const (
	TableObjects   Table = "objects"
	TableWriters   Table = "writers"
	TableResources Table = "resources"
)

// Tables are every table, in the order they are written.
var Tables = []Table{TableObjects, TableWriters, TableResources}

// Headline is a ranking's first line: the window and what it held.
func Headline(r Ranking) string {
	s := fmt.Sprintf("top after %s: %d writes (%.1f/s) and %d heartbeats in the last %s",
		r.Elapsed.Round(time.Second), r.Writes, float64(r.Writes)/r.Window.Seconds(), r.Heartbeats, r.Window.Round(time.Second))
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf("; %d resources skipped (forbidden)", len(r.Skipped))
	}
	return s
}

// WriteText writes a ranking as plain tables: the headline, the first limit objects (each
// diagnosed loop with its fix under it), the writers, the resources that were written. Skipped
// resources are named by the caller, once.
func WriteText(w io.Writer, r Ranking, limit int) error {
	fmt.Fprintln(w, Headline(r))
	if err := WriteTable(w, r, TableObjects, limit); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := WriteTable(w, r, TableWriters, limit); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := WriteTable(w, r, TableResources, limit); err != nil {
		return err
	}
	return WriteAPIText(w, r.API, limit)
}

// WriteTable writes one table of a ranking, at most limit rows (0: all); a diagnosed loop's fix
// goes on a line under its row.
func WriteTable(w io.Writer, r Ranking, t Table, limit int) error {
	header, rows, notes := TableLines(r, t, limit)
	var b strings.Builder
	b.WriteString(header + "\n")
	for i, row := range rows {
		b.WriteString(row + "\n")
		if notes[i] != "" {
			b.WriteString(notes[i] + "\n")
		}
	}
	if len(rows) == 0 {
		b.WriteString("(no writes in the window)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TableLines renders one table of a ranking as aligned lines: the header, at most limit rows
// (0: all) and, per row, its note: "", or lines to write under the row, outside the columns so
// that they do not widen them (the loop's fix, the newest update's values).
func TableLines(r Ranking, t Table, limit int) (header string, rows, notes []string) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	more := func() bool { return limit <= 0 || len(notes) < limit }
	switch t {
	case TableObjects:
		fmt.Fprintln(tw, "#\tRESOURCE\tOBJECT\tWRITES/S\tWRITES\tHEARTBEATS\tWRITERS\tLOOP\tFIELDS")
		for i, o := range r.Objects {
			if !more() {
				break
			}
			loop := printer.Escape(o.Loop)
			if loop == "" {
				loop = "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.1f\t%d\t%d\t%s\t%s\t%s\n", i+1, printer.Escape(o.Resource), printer.Escape(ObjectName(o.Namespace, o.Name)),
				o.Rate, o.Writes, o.Heartbeats, countList(o.Managers, 3), loop, countList(o.Paths, 2))
			var note []string
			if o.Suggestion != "" {
				note = append(note, "   "+loop+": "+printer.Escape(o.Suggestion))
			}
			if o.LastChanges != "" {
				note = append(note, "   last: "+printer.Escape(o.LastChanges)+" (by "+printer.Escape(o.LastBy)+")")
			}
			notes = append(notes, strings.Join(note, "\n"))
		}
	case TableWriters:
		fmt.Fprintln(tw, "WRITER\tWRITES/S\tWRITES\tHEARTBEATS\tOBJECTS\tRESOURCES")
		for _, wr := range r.Writers {
			if !more() {
				break
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%d\t%d\t%d\t%s\n", printer.Escape(managerName(wr.Manager)), wr.Rate, wr.Writes, wr.Heartbeats, wr.Objects, countList(wr.Resources, 3))
			notes = append(notes, "")
		}
	case TableResources:
		fmt.Fprintln(tw, "RESOURCE\tWRITES/S\tWRITES\tHEARTBEATS\tWRITTEN\tOBJECTS\tCREATES\tDELETES")
		for _, rr := range r.Resources {
			if !more() || rr.Writes+rr.Heartbeats+rr.Creates+rr.Deletes == 0 {
				break
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\n", printer.Escape(rr.Resource), rr.Rate, rr.Writes, rr.Heartbeats, rr.Written, rr.Objects, rr.Creates, rr.Deletes)
			notes = append(notes, "")
		}
	}
	_ = tw.Flush()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	return lines[0], lines[1:], notes
}

// ObjectName is namespace/name, or name for a cluster-scoped object.
func ObjectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// managerName shows a write nobody could be named for.
func managerName(m string) string {
	if m == "" {
		return "(unknown)"
	}
	return m
}

// countList is `a:12,b:3` with at most n entries, `+k` for the rest; "-" when empty.
func countList(cs []Count, n int) string {
	if len(cs) == 0 {
		return "-"
	}
	var parts []string
	for i, c := range cs {
		if i == n {
			parts = append(parts, fmt.Sprintf("+%d", len(cs)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s:%d", managerName(c.Name), c.Writes))
	}
	return printer.Escape(strings.Join(parts, ","))
}

// DrillIn is the command that shows an object's updates with their diffs and writers: each name
// one shell word (a pasted command runs what it says), control characters escaped.
func DrillIn(o ObjectRank) string {
	cmd := "kubectl informer watch " + shell.Quote(o.Resource) + " " + shell.Quote(o.Name)
	if o.Namespace != "" {
		cmd += " -n " + shell.Quote(o.Namespace)
	}
	return printer.Escape(cmd + " --diff")
}

// WriteFinal writes the final ranking, and under it, for each of the first limit objects that
// were written, the command to drill into it.
func WriteFinal(w io.Writer, r Ranking, limit int) error {
	if err := WriteText(w, r, limit); err != nil {
		return err
	}
	var cmds []string
	for i, o := range r.Objects {
		if (limit > 0 && i >= limit) || o.Writes == 0 {
			break
		}
		cmds = append(cmds, fmt.Sprintf("  %d  %s", i+1, DrillIn(o)))
	}
	if len(cmds) > 0 {
		fmt.Fprintln(w, "\nto drill into an object (its updates, with diffs and writers):")
		fmt.Fprintln(w, strings.Join(cmds, "\n"))
	}
	return nil
}

// JSON lines (docs/json.md): Top per ranked object, TopWriter per writer, TopResource per
// resource written, TopSkipped per skipped resource (once).

type countRecord struct {
	Name   string `json:"name"`
	Writes int    `json:"writes"`
}

type topRecord struct {
	Type         string        `json:"type"`
	Time         string        `json:"time"`
	Rank         int           `json:"rank"`
	Window       float64       `json:"windowSeconds"`
	Resource     string        `json:"resource"`
	Namespace    string        `json:"namespace,omitempty"`
	Name         string        `json:"name"`
	Writes       int           `json:"writes"`
	Heartbeats   int           `json:"heartbeats"`
	Rate         float64       `json:"rate"`
	Managers     []countRecord `json:"managers"`
	Paths        []countRecord `json:"paths"`
	Loop         string        `json:"loop,omitempty"`
	LoopManagers []string      `json:"loopManagers,omitempty"`
	Suggestion   string        `json:"suggestion,omitempty"`
	LastBy       string        `json:"lastBy,omitempty"`
	LastChanges  string        `json:"lastChanges,omitempty"`
	Final        bool          `json:"final,omitempty"`
	Watch        string        `json:"watch,omitempty"`
}

type writerRecord struct {
	Type       string        `json:"type"`
	Time       string        `json:"time"`
	Rank       int           `json:"rank"`
	Window     float64       `json:"windowSeconds"`
	Manager    string        `json:"manager"`
	Writes     int           `json:"writes"`
	Heartbeats int           `json:"heartbeats"`
	Rate       float64       `json:"rate"`
	Objects    int           `json:"objects"`
	Resources  []countRecord `json:"resources"`
	Final      bool          `json:"final,omitempty"`
}

type resourceRecord struct {
	Type       string  `json:"type"`
	Time       string  `json:"time"`
	Rank       int     `json:"rank"`
	Window     float64 `json:"windowSeconds"`
	Resource   string  `json:"resource"`
	Writes     int     `json:"writes"`
	Heartbeats int     `json:"heartbeats"`
	Rate       float64 `json:"rate"`
	Written    int     `json:"written"`
	Objects    int     `json:"objects"`
	Creates    int     `json:"creates"`
	Deletes    int     `json:"deletes"`
	Final      bool    `json:"final,omitempty"`
}

type skippedRecord struct {
	Type     string `json:"type"`
	Time     string `json:"time"`
	Resource string `json:"resource"`
	Message  string `json:"message"`
}

func records(cs []Count) []countRecord {
	out := make([]countRecord, 0, len(cs))
	for _, c := range cs {
		out = append(out, countRecord(c))
	}
	return out
}

// WriteJSON writes a ranking as NDJSON lines: the first limit objects (0: all) that were
// written, every writer, every resource written; final marks the ranking at exit (whose Top
// lines carry the drill-in command). Skipped resources not reported yet (by index in
// r.Skipped, from *skippedDone) get a TopSkipped line first.
func WriteJSON(w io.Writer, r Ranking, limit int, final bool, skippedDone *int) error {
	enc := json.NewEncoder(w)
	at := r.At.UTC().Format(recording.TimeFormat)
	win := r.Window.Seconds()
	for ; *skippedDone < len(r.Skipped); *skippedDone++ {
		s := r.Skipped[*skippedDone]
		if err := enc.Encode(skippedRecord{Type: "TopSkipped", Time: at, Resource: s.Resource, Message: s.Message}); err != nil {
			return err
		}
	}
	for i, o := range r.Objects {
		if limit > 0 && i >= limit {
			break
		}
		rec := topRecord{Type: "Top", Time: at, Rank: i + 1, Window: win, Resource: o.Resource, Namespace: o.Namespace, Name: o.Name,
			Writes: o.Writes, Heartbeats: o.Heartbeats, Rate: round(o.Rate), Managers: records(o.Managers), Paths: records(o.Paths),
			Loop: o.Loop, LoopManagers: o.LoopManagers, Suggestion: o.Suggestion, LastBy: o.LastBy, LastChanges: o.LastChanges, Final: final}
		if final {
			rec.Watch = DrillIn(o)
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	for i, wr := range r.Writers {
		if err := enc.Encode(writerRecord{Type: "TopWriter", Time: at, Rank: i + 1, Window: win, Manager: wr.Manager, Writes: wr.Writes,
			Heartbeats: wr.Heartbeats, Rate: round(wr.Rate), Objects: wr.Objects, Resources: records(wr.Resources), Final: final}); err != nil {
			return err
		}
	}
	for i, rr := range r.Resources {
		if rr.Writes+rr.Heartbeats+rr.Creates+rr.Deletes == 0 {
			break
		}
		if err := enc.Encode(resourceRecord{Type: "TopResource", Time: at, Rank: i + 1, Window: win, Resource: rr.Resource, Writes: rr.Writes,
			Heartbeats: rr.Heartbeats, Rate: round(rr.Rate), Written: rr.Written, Objects: rr.Objects, Creates: rr.Creates, Deletes: rr.Deletes, Final: final}); err != nil {
			return err
		}
	}
	return WriteAPIJSON(w, r, limit, final)
}

func round(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
