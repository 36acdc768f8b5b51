// Package toptui is `kubectl informer top` on a terminal: the ranking redrawn live (bubbletea),
// keys to sort, filter and switch tables, Enter to drill into an object's live history, Esc
// back, q to quit. It renders what internal/top computes and starts its drills; it never talks
// to the API itself.
package toptui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kubectl-informer/kubectl-informer/internal/top"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// Drill starts following one object; the TUI stops it by cancelling ctx.
type Drill func(ctx context.Context, o top.ObjectRank, changed func()) *top.Drill

// Ranking is a new ranking for the TUI (top.Config.Report sends it).
type Ranking top.Ranking

// Done ends the TUI: the run is over (--duration).
type Done struct{}

type redraw struct{}

// The sort orders, per table, that s cycles through.
var sorts = map[top.Table][]string{
	top.TableObjects:   {"writes", "heartbeats", "name"},
	top.TableWriters:   {"writes", "heartbeats", "objects", "name"},
	top.TableResources: {"writes", "objects", "name"},
}

// Model is the TUI's state.
type Model struct {
	drill   Drill
	send    func(tea.Msg) // Program.Send, for the drill's redraws
	ranking top.Ranking
	table   int // index in top.Tables
	sortBy  map[top.Table]int
	filter  string
	editing bool // typing a filter
	cursor  int  // selected object row (objects table)
	width   int
	height  int
	// The drill shown (Enter), with its stop (nil: the table is shown).
	drilled *top.Drill
	stop    context.CancelFunc
	title   string
}

var (
	titleStyle    = lipgloss.NewStyle().Bold(true)
	headerStyle   = lipgloss.NewStyle().Bold(true).Underline(true)
	selectedStyle = lipgloss.NewStyle().Reverse(true)
	helpStyle     = lipgloss.NewStyle().Faint(true)
	noteStyle     = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
)

// New returns the model; drill starts an object's drill.
func New(drill Drill) *Model {
	return &Model{drill: drill, sortBy: map[top.Table]int{}, width: 120, height: 40}
}

// SetSend gives the model the program's Send (before the program runs).
func (m *Model) SetSend(send func(tea.Msg)) { m.send = send }

// Init starts nothing: rankings come from top.Run.
func (m *Model) Init() tea.Cmd { return nil }

// Update handles keys, window sizes, rankings and the end of the run.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case Ranking:
		m.ranking = top.Ranking(msg)
		m.cursor = min(m.cursor, max(len(m.objects())-1, 0))
	case Done:
		m.stopDrill()
		return m, tea.Quit
	case redraw:
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if k.Type == tea.KeyCtrlC {
		m.stopDrill()
		return m, tea.Quit
	}
	// Keys typed fast (or pasted) come as one message: each is a key of its own.
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste {
		var cmds []tea.Cmd
		for _, r := range k.Runes {
			_, cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt})
			cmds = append(cmds, cmd)
		}
		return m, tea.Batch(cmds...)
	}
	if m.editing {
		switch k.Type {
		case tea.KeyEnter:
			m.editing = false
		case tea.KeyEsc:
			m.editing, m.filter = false, ""
		case tea.KeyBackspace:
			if m.filter != "" {
				m.filter = m.filter[:len(m.filter)-1]
			}
		case tea.KeyRunes, tea.KeySpace:
			m.filter += string(k.Runes)
		}
		m.cursor = 0
		return m, nil
	}
	if m.stop != nil {
		switch k.String() {
		case "esc", "backspace", "left":
			m.stopDrill()
		case "q":
			m.stopDrill()
			return m, tea.Quit
		}
		return m, nil
	}
	t := top.Tables[m.table]
	switch k.String() {
	case "q":
		return m, tea.Quit
	case "tab", "right":
		m.table = (m.table + 1) % len(top.Tables)
	case "shift+tab", "left":
		m.table = (m.table + len(top.Tables) - 1) % len(top.Tables)
	case "1", "2", "3":
		m.table = int(k.Runes[0] - '1')
	case "s":
		m.sortBy[t] = (m.sortBy[t] + 1) % len(sorts[t])
	case "/":
		m.editing, m.filter = true, ""
	case "esc":
		m.filter = ""
	case "up", "k":
		m.cursor = max(m.cursor-1, 0)
	case "down", "j":
		m.cursor = min(m.cursor+1, max(len(m.objects())-1, 0))
	case "enter":
		objs := m.objects()
		if t == top.TableObjects && m.cursor < len(objs) && objs[m.cursor].Ref.Resource != "" {
			m.startDrill(objs[m.cursor])
		}
	}
	return m, nil
}

func (m *Model) startDrill(o top.ObjectRank) {
	ctx, stop := context.WithCancel(context.Background())
	m.stop = stop
	// The title is drawn raw: a name's OSC sequence would set the terminal's title or clipboard.
	m.title = printer.Escape(o.Resource + " " + top.ObjectName(o.Namespace, o.Name))
	send := m.send
	m.drilled = m.drill(ctx, o, func() {
		if send != nil {
			send(redraw{})
		}
	})
}

func (m *Model) stopDrill() {
	if m.stop != nil {
		m.stop()
	}
	m.drilled, m.stop = nil, nil
}

// view is the ranking with the current table's sort and filter applied.
func (m *Model) view() top.Ranking {
	r := m.ranking
	r.Objects = slices.Clone(r.Objects)
	r.Writers = slices.Clone(r.Writers)
	r.Resources = slices.Clone(r.Resources)
	f := strings.ToLower(m.filter)
	match := func(s ...string) bool {
		return f == "" || strings.Contains(strings.ToLower(strings.Join(s, " ")), f)
	}
	r.Objects = slices.DeleteFunc(r.Objects, func(o top.ObjectRank) bool {
		var ms []string
		for _, c := range o.Managers {
			ms = append(ms, c.Name)
		}
		return !match(o.Resource, top.ObjectName(o.Namespace, o.Name), o.Loop, strings.Join(ms, " "))
	})
	r.Writers = slices.DeleteFunc(r.Writers, func(w top.WriterRank) bool { return !match(w.Manager) })
	r.Resources = slices.DeleteFunc(r.Resources, func(x top.ResourceRank) bool { return !match(x.Resource) })
	switch sorts[top.TableObjects][m.sortBy[top.TableObjects]] {
	case "heartbeats":
		slices.SortStableFunc(r.Objects, func(a, b top.ObjectRank) int { return cmp.Compare(b.Heartbeats, a.Heartbeats) })
	case "name":
		slices.SortStableFunc(r.Objects, func(a, b top.ObjectRank) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Resource, b.Resource))
		})
	}
	switch sorts[top.TableWriters][m.sortBy[top.TableWriters]] {
	case "heartbeats":
		slices.SortStableFunc(r.Writers, func(a, b top.WriterRank) int { return cmp.Compare(b.Heartbeats, a.Heartbeats) })
	case "objects":
		slices.SortStableFunc(r.Writers, func(a, b top.WriterRank) int { return cmp.Compare(b.Objects, a.Objects) })
	case "name":
		slices.SortStableFunc(r.Writers, func(a, b top.WriterRank) int { return cmp.Compare(a.Manager, b.Manager) })
	}
	switch sorts[top.TableResources][m.sortBy[top.TableResources]] {
	case "objects":
		slices.SortStableFunc(r.Resources, func(a, b top.ResourceRank) int { return cmp.Compare(b.Objects, a.Objects) })
	case "name":
		slices.SortStableFunc(r.Resources, func(a, b top.ResourceRank) int { return cmp.Compare(a.Resource, b.Resource) })
	}
	return r
}

func (m *Model) objects() []top.ObjectRank { return m.view().Objects }

// View draws the screen.
func (m *Model) View() string {
	if m.stop != nil {
		return m.drillView()
	}
	var b strings.Builder
	r := m.view()
	if m.ranking.At.IsZero() {
		b.WriteString(titleStyle.Render("kubectl informer top: starting the informers...") + "\n")
	} else {
		b.WriteString(titleStyle.Render(top.Headline(m.ranking)) + "\n")
	}
	t := top.Tables[m.table]
	var tabs []string
	for i, name := range top.Tables {
		label := fmt.Sprintf("%d %s", i+1, name)
		if i == m.table {
			label = selectedStyle.Render(label)
		}
		tabs = append(tabs, label)
	}
	status := "sort: " + sorts[t][m.sortBy[t]]
	if m.editing {
		status += "   filter: " + printer.Escape(m.filter) + "_"
	} else if m.filter != "" {
		status += "   filter: " + printer.Escape(m.filter)
	}
	b.WriteString(strings.Join(tabs, "  ") + "   " + status + "\n\n")
	// Leave room for the title, the tabs, the help line; a row may take two lines (its fix).
	room := max(m.height-6, 3)
	header, rows, notes := top.TableLines(r, t, 0)
	b.WriteString(headerStyle.Render(header) + "\n")
	lines := 0
	first := 0
	if t == top.TableObjects && m.cursor >= room/2 {
		first = m.cursor - room/2 + 1
	}
	for i := first; i < len(rows) && lines < room; i++ {
		row := rows[i]
		if t == top.TableObjects && i == m.cursor {
			row = selectedStyle.Render(row)
		}
		b.WriteString(row + "\n")
		lines++
		if notes[i] != "" && lines < room {
			b.WriteString(noteStyle.Render(notes[i]) + "\n")
			lines += strings.Count(notes[i], "\n") + 1
		}
	}
	if len(rows) == 0 {
		b.WriteString("(no writes in the window)\n")
	}
	b.WriteString(helpStyle.Render("↑/↓ select  enter history  tab/1-3 table  s sort  / filter  esc clear  q quit") + "\n")
	return b.String()
}

func (m *Model) drillView() string {
	var b strings.Builder
	b.WriteString(titleStyle.Render("history of "+m.title+" (live)") + "\n\n")
	lines := []string{"(starting)"}
	if m.drilled != nil {
		lines = m.drilled.Table()
	}
	room := max(m.height-4, 3)
	if len(lines) > room {
		// The header, then the newest rows.
		lines = append(lines[:1:1], lines[len(lines)-room+1:]...)
	}
	for i, l := range lines {
		if i == 0 {
			l = headerStyle.Render(l)
		}
		b.WriteString(l + "\n")
	}
	b.WriteString(helpStyle.Render("esc back  q quit") + "\n")
	return b.String()
}
