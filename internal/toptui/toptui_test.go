package toptui

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubectl-informer/kubectl-informer/internal/top"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

var rs = discovery.Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}

func ranking() Ranking {
	return Ranking{At: time.Unix(100, 0), Window: 10 * time.Second, Elapsed: 10 * time.Second, Writes: 30, Heartbeats: 5,
		Objects: []top.ObjectRank{
			{Resource: "replicasets.apps", Ref: rs, Namespace: "shop", Name: "web-1", Writes: 20, Rate: 2,
				Managers: []top.Count{{Name: "kube-controller-manager", Writes: 10}, {Name: "widget-operator", Writes: 10}},
				Loop:     "fight", Suggestion: "fix: let only one of them write these fields"},
			{Resource: "widgets.example.com", Namespace: "shop", Name: "loop", Writes: 10, Rate: 1, Loop: "self"},
			{Resource: "leases.coordination.k8s.io", Namespace: "kube-system", Name: "kube-scheduler", Heartbeats: 5},
		},
		Writers:   []top.WriterRank{{Manager: "widget-operator", Writes: 20}, {Manager: "kube-scheduler", Writes: 5, Heartbeats: 5}},
		Resources: []top.ResourceRank{{Resource: "replicasets.apps", Writes: 20, Objects: 3}, {Resource: "leases.coordination.k8s.io", Heartbeats: 5, Objects: 9}},
	}
}

func keys(m *Model, ks ...string) {
	for _, k := range ks {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		m.Update(msg)
	}
}

// firstRow is the first row of the table shown.
func firstRow(m *Model) string {
	lines := strings.Split(m.View(), "\n")
	return lines[4]
}

func TestSortFilterSwitch(t *testing.T) {
	m := New(nil)
	m.Update(ranking())
	if r := firstRow(m); !strings.Contains(r, "shop/web-1") || !strings.Contains(r, "fight") {
		t.Errorf("first row %q, want the fight", r)
	}
	if v := m.View(); !strings.Contains(v, "fight: fix: let only one of them write these fields") {
		t.Errorf("no fix under the fight:\n%s", v)
	}
	keys(m, "s") // by heartbeats
	if r := firstRow(m); !strings.Contains(r, "kube-scheduler") {
		t.Errorf("sorted by heartbeats, first row %q", r)
	}
	keys(m, "s", "s") // back to writes
	keys(m, "/", "self", "enter")
	if r := firstRow(m); !strings.Contains(r, "shop/loop") || strings.Contains(m.View(), "web-1") {
		t.Errorf("filtered by %q, first row %q:\n%s", "self", r, m.View())
	}
	keys(m, "esc")
	keys(m, "tab")
	if r := firstRow(m); !strings.HasPrefix(r, "widget-operator") {
		t.Errorf("writers table, first row %q", r)
	}
	keys(m, "3")
	if r := firstRow(m); !strings.HasPrefix(r, "replicasets.apps") {
		t.Errorf("resources table, first row %q", r)
	}
}

// Keys that come in one message (typed fast, as tmux sends them) are each handled.
func TestKeysInOneMessage(t *testing.T) {
	m := New(nil)
	m.Update(ranking())
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/loop")})
	if m.filter != "loop" || !m.editing {
		t.Errorf("filter %q (editing %v), want loop being typed", m.filter, m.editing)
	}
}

// Enter drills into the selected object; Esc stops the drill and goes back; q quits.
func TestDrill(t *testing.T) {
	var got []top.ObjectRank
	var ctxs []context.Context
	m := New(func(ctx context.Context, o top.ObjectRank, _ func()) *top.Drill {
		got, ctxs = append(got, o), append(ctxs, ctx)
		return nil
	})
	m.Update(ranking())
	keys(m, "down", "enter") // the self-loop: no Ref, nothing to drill into
	if len(got) != 0 {
		t.Fatalf("drilled into %+v, which has no resolved resource", got)
	}
	keys(m, "k", "enter")
	if len(got) != 1 || got[0].Name != "web-1" {
		t.Fatalf("drilled into %+v, want web-1", got)
	}
	if v := m.View(); !strings.Contains(v, "history of replicasets.apps shop/web-1 (live)") {
		t.Errorf("drill view:\n%s", v)
	}
	keys(m, "esc")
	if ctxs[0].Err() == nil || strings.Contains(m.View(), "history of") {
		t.Errorf("Esc: drill not stopped (%v) or still shown", ctxs[0].Err())
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	if cmd == nil {
		t.Fatal("q: no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q does not quit")
	}
}

// hostile holds the control sequences a name can carry (names of ClusterRoles and Roles are path
// segments: ESC and BEL are allowed): a window title (OSC 0), the clipboard (OSC 52), a cursor move,
// a C1 CSI and a right-to-left override.
const hostile = "t\x1b]0;PWNTITLE\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b31m\u202ex"

// sgr is the styling the TUI writes itself (lipgloss: bold, reverse, colors).
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// rawControl is the first control character in s that is not a newline or the TUI's own styling.
func rawControl(s string) (rune, bool) {
	for _, r := range sgr.ReplaceAllString(s, "") {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			return r, true
		}
	}
	return 0, false
}

// Every server-derived string the TUI shows is escaped: the rows of each table, their notes, the
// filter, and the drill's title (an OSC sequence there set the terminal's title, OSC 52 its
// clipboard).
func TestHostileNamesEscaped(t *testing.T) {
	r := ranking()
	r.Objects = append([]top.ObjectRank{{Resource: "clusterroles.rbac.authorization.k8s.io" + hostile, Ref: rs, Namespace: hostile, Name: hostile,
		Writes: 30, Rate: 3, Managers: []top.Count{{Name: hostile, Writes: 30}}, Paths: []top.Count{{Name: "metadata.labels." + hostile, Writes: 30}},
		Loop: "fight" + hostile, Suggestion: hostile, LastBy: hostile, LastChanges: "metadata.labels.a: " + hostile}}, r.Objects...)
	r.Writers = append([]top.WriterRank{{Manager: hostile, Writes: 30, Resources: []top.Count{{Name: hostile, Writes: 30}}}}, r.Writers...)
	r.Resources = append([]top.ResourceRank{{Resource: hostile, Writes: 30, Objects: 1}}, r.Resources...)
	m := New(func(context.Context, top.ObjectRank, func()) *top.Drill { return nil })
	m.Update(r)
	for _, table := range []string{"1", "2", "3"} {
		keys(m, table)
		if c, ok := rawControl(m.View()); ok {
			t.Errorf("table %s: raw %U in the view:\n%q", table, c, m.View())
		}
	}
	keys(m, "1", "/")
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("\x1b]0;typed\x07"), Paste: true})
	if c, ok := rawControl(m.View()); ok {
		t.Errorf("filter: raw %U in the view:\n%q", c, m.View())
	}
	keys(m, "esc", "enter")
	v := m.View()
	if !strings.Contains(v, "history of clusterroles") {
		t.Fatalf("not drilled in:\n%q", v)
	}
	if c, ok := rawControl(v); ok {
		t.Errorf("drill: raw %U in the view:\n%q", c, v)
	}
	if !strings.Contains(v, `t^[]0;PWNTITLE\x07`) {
		t.Errorf("drill title does not show the name escaped:\n%q", v)
	}
}
