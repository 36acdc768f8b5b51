package diff

import (
	"strings"
	"testing"
)

func TestPatternMatches(t *testing.T) {
	old := `{"metadata":{"annotations":{"control-plane.alpha.kubernetes.io/leader":"a","x":"1"}},
		"spec":{"replicas":1,"renewTime":"t1","containers":[{"name":"web","image":"a"}],"args":["a","b"]},
		"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"h1"}]}}`
	cur := `{"metadata":{"annotations":{"control-plane.alpha.kubernetes.io/leader":"b","x":"2"}},
		"spec":{"replicas":3,"renewTime":"t2","containers":[{"name":"web","image":"b"}],"args":["a","c"]},
		"status":{"conditions":[{"type":"Ready","status":"False","lastHeartbeatTime":"h2"},{"type":"Disk","status":"True"}]}}`
	changes := Compute(obj(t, old), obj(t, cur))
	tests := []struct {
		pattern string
		covers  []string // the paths it covers
		touches []string // more paths it touches (beyond covers)
	}{
		{"spec.replicas", []string{"spec.replicas"}, nil},
		{"spec", []string{"spec.args[1]", "spec.containers[name=web].image", "spec.renewTime", "spec.replicas"}, nil},
		{`metadata.annotations["control-plane.alpha.kubernetes.io/leader"]`, []string{`metadata.annotations["control-plane.alpha.kubernetes.io/leader"]`}, nil},
		{"metadata.annotations.*", []string{`metadata.annotations["control-plane.alpha.kubernetes.io/leader"]`, "metadata.annotations.x"}, nil},
		{"metadata.annotations[*]", []string{`metadata.annotations["control-plane.alpha.kubernetes.io/leader"]`, "metadata.annotations.x"}, nil},
		{`metadata.annotations["x"]`, []string{"metadata.annotations.x"}, nil},
		{"status.conditions[*].lastHeartbeatTime", []string{"status.conditions[type=Ready].lastHeartbeatTime"}, []string{"status.conditions[type=Disk]"}},
		{"status.conditions[type=Ready].status", []string{"status.conditions[type=Ready].status"}, nil},
		{`status.conditions[type="Ready"]`, []string{"status.conditions[type=Ready].lastHeartbeatTime", "status.conditions[type=Ready].status"}, nil},
		{"spec.containers[name=web].image", []string{"spec.containers[name=web].image"}, nil},
		{"spec.args[1]", []string{"spec.args[1]"}, nil},
		{"spec.args[0]", nil, nil},
		{"spec.containers[name=api]", nil, nil},
		{"*.replicas", []string{"spec.replicas"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			p, err := ParsePattern(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			var covers, touches []string
			for _, c := range changes {
				if p.Covers(c) {
					covers = append(covers, c.Path)
				} else if p.Touches(c) {
					touches = append(touches, c.Path)
				}
			}
			if strings.Join(covers, " ") != strings.Join(tt.covers, " ") {
				t.Errorf("covers %q, want %q", covers, tt.covers)
			}
			if strings.Join(touches, " ") != strings.Join(tt.touches, " ") {
				t.Errorf("touches %q more, want %q", touches, tt.touches)
			}
		})
	}
}

func TestParsePatternErrors(t *testing.T) {
	tests := []struct{ in, wantErr string }{
		{"", `invalid path "": empty`},
		{"status.conditions[*", `invalid path "status.conditions[*": unclosed [ at offset 17`},
		{"spec..replicas", `invalid path "spec..replicas": empty field name at offset 5`},
		{".spec", `invalid path ".spec": empty field name at offset 0`},
		{"metadata.labels.app.kubernetes.io/name", `field name "io/name" is not a plain name (quote a key with dots or slashes in brackets, as in metadata.labels["app.kubernetes.io/name"]) at offset 31`},
		{`metadata.annotations["a`, "unterminated quoted key"},
		{"spec.args[x]", `[x] is neither an index, *, a quoted key ["k"] nor an element [key=value]`},
		{"spec.args[-1]", "is neither an index"},
		{"spec.c[name=]", "empty value of name="},
		{"spec[0]x", `unexpected 'x'`},
	}
	for _, tt := range tests {
		_, err := ParsePattern(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParsePattern(%q) = %v, want %q", tt.in, err, tt.wantErr)
		}
	}
	// Every path Compute prints parses back and covers its own change.
	for _, c := range Compute(obj(t, `{"a":{"b c":[{"name":"x y","v":1}],"l":[1]}}`), obj(t, `{"a":{"b c":[{"name":"x y","v":2}],"l":[2]}}`)) {
		p, err := ParsePattern(c.Path)
		if err != nil || !p.Covers(c) {
			t.Errorf("%s: %v, covers %v", c.Path, err, err == nil && p.Covers(c))
		}
	}
}

// Reverting every change gives the old object back; reverting some leaves only the others.
func TestRevert(t *testing.T) {
	old := obj(t, `{"spec":{"renewTime":"1","holder":"a","gone":"x"},"status":{"conditions":[{"type":"Ready","lastHeartbeatTime":"h1","status":"True"}]},"l":[1,2]}`)
	cur := obj(t, `{"spec":{"renewTime":"2","holder":"b","new":"y"},"status":{"conditions":[{"type":"Ready","lastHeartbeatTime":"h2","status":"False"}]},"l":[1,3]}`)
	changes := Compute(old, cur)
	if got := Compute(old, Revert(cur, changes)); len(got) != 0 {
		t.Errorf("all reverted, still changed: %v", short(got))
	}
	var some []Change
	for _, c := range changes {
		if c.Path == "spec.renewTime" || c.Path == "status.conditions[type=Ready].lastHeartbeatTime" || c.Path == "spec.new" || c.Path == "l[1]" {
			some = append(some, c)
		}
	}
	got := short(Compute(old, Revert(cur, some)))
	want := []string{`spec.gone: "x" → -`, `spec.holder: "a" → "b"`, `status.conditions[type=Ready].status: "True" → "False"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
	if cur["spec"].(map[string]any)["renewTime"] != "2" {
		t.Errorf("Revert changed its input")
	}
}

// ComputeIgnoring marks the changes at or under an ignored path as it finds them, as matching
// Compute's changes one by one does.
func TestComputeIgnoringMarks(t *testing.T) {
	old := map[string]any{"spec": map[string]any{"renewTime": "1", "holder": "a"}, "status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "lastHeartbeatTime": "1"}}}}
	cur := map[string]any{"spec": map[string]any{"renewTime": "2", "holder": "b"}, "status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "lastHeartbeatTime": "2"}}}}
	var ignore []Pattern
	for _, s := range []string{"spec.renewTime", "status.conditions[*].lastHeartbeatTime"} {
		p, err := ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		ignore = append(ignore, p)
	}
	got := ComputeIgnoring(old, cur, ignore)
	want := Compute(old, cur)
	if len(got) != 3 || len(want) != len(got) {
		t.Fatalf("changes %+v, want 3 as Compute's %+v", got, want)
	}
	for i, c := range got {
		covered := ignore[0].Covers(want[i]) || ignore[1].Covers(want[i])
		if c.Path != want[i].Path || c.Ignored != covered || want[i].Ignored {
			t.Errorf("%s ignored %v, want %v (Compute's %s marked %v)", c.Path, c.Ignored, covered, want[i].Path, want[i].Ignored)
		}
	}
	n := 0
	for _, c := range got {
		if c.Ignored {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d changes ignored, want the two heartbeats: %+v", n, got)
	}
}
