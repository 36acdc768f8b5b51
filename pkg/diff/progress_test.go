package diff

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func ch(path string, old, cur any) Change {
	return Change{Path: path, Old: old, New: cur, HasOld: old != nil, HasNew: cur != nil}
}

func TestConverging(t *testing.T) {
	tests := []struct {
		name    string
		changes []Change
		want    bool
	}{
		{"observedGeneration catches up", []Change{ch("status.observedGeneration", 1.0, 2.0)}, true},
		{"a replica count moves", []Change{ch("status.readyReplicas", 2.0, 3.0), ch("status.conditions[type=Available].lastUpdateTime", "a", "b")}, true},
		{"status.replicas", []Change{ch("status.replicas", 4.0, 3.0)}, true},
		{"a scale", []Change{ch("spec.replicas", 1.0, 2.0)}, true},
		{"a condition's status", []Change{ch("status.conditions[type=Ready].status", "False", "True")}, true},
		{"a condition's reason", []Change{ch("status.conditions[type=Progressing].reason", "ReplicaSetUpdated", "NewReplicaSetAvailable")}, true},
		{"a condition added", []Change{ch("status.conditions[type=Ready]", nil, map[string]any{"type": "Ready"})}, true},
		{"a pod's phase", []Change{ch("status.phase", "Pending", "Running")}, true},
		{"deletion requested", []Change{ch("metadata.deletionTimestamp", nil, "2026-11-22T00:00:00Z")}, true},
		{"a finalizer removed", []Change{ch("metadata.finalizers[0]", "kubernetes", nil)}, true},
		{"a finalizer added", []Change{ch("metadata.finalizers[0]", nil, "x")}, false},
		{"only a condition's timestamps and message", []Change{ch("status.conditions[type=Progressing].lastUpdateTime", "a", "b"), ch("status.conditions[type=Progressing].message", "m1", "m2")}, false},
		{"a status timestamp", []Change{ch("status.lastReconciled", "t1", "t2")}, false},
		{"an annotation", []Change{ch(`metadata.annotations["echo/last-seen"]`, "t1", "t2")}, false},
		{"a nested field named like a count", []Change{ch("status.shards.readyReplicas", 1.0, 2.0)}, false},
		{"a spec rewrite", []Change{ch("spec.template.spec.containers[name=web].image", "a", "b")}, false},
		{"nothing", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Converging(tt.changes); got != tt.want {
				t.Errorf("Converging(%v) = %v, want %v", tt.changes, got, tt.want)
			}
		})
	}
}

// A rollout's converging updates do not make a hot loop at the MaxUpdates threshold; a status
// churning without end still does at ConvergingFactor times it; values flipping back count
// even when each write looks like progress; a timestamp rewritten on every reconcile counts.
func TestHotLoopConverging(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	progress := func(i int) Update {
		return Update{At: t0.Add(time.Duration(i) * 100 * time.Millisecond), Managers: []string{"kube-controller-manager"},
			Paths: []string{"status.readyReplicas"}, Converging: true,
			Changes: []Change{ch("status.readyReplicas", float64(i), float64(i+1))}}
	}
	t.Run("a rollout", func(t *testing.T) {
		d := NewHotLoopDetector(10, 30*time.Second)
		for i := range 30 {
			if h := d.Observe("web", progress(i)); h != nil {
				t.Fatalf("update %d of a rollout reported: %+v", i, h)
			}
		}
	})
	t.Run("status churning without end", func(t *testing.T) {
		d := NewHotLoopDetector(10, 30*time.Second)
		for i := range 51 {
			h := d.Observe("web", progress(i))
			if i < 50 && h != nil {
				t.Fatalf("reported at update %d, want at the 51st", i)
			}
			if i == 50 && (h == nil || h.Reason != "updates" || h.Updates != 51) {
				t.Fatalf("51 converging updates in the window: %+v, want an updates report", h)
			}
		}
	})
	t.Run("a scale flipping back", func(t *testing.T) {
		d := NewHotLoopDetector(3, 30*time.Second)
		var got *HotLoop
		for i := range 5 {
			old, cur := 3.0, 4.0
			if i%2 == 1 {
				old, cur = 4.0, 3.0
			}
			// One writer, so not "alternating": only the flip-back makes it suspect.
			u := Update{At: t0.Add(time.Duration(i) * time.Second), Managers: []string{"op"}, Paths: []string{"spec.replicas"},
				Converging: true, Changes: []Change{ch("spec.replicas", old, cur)}}
			if h := d.Observe("rs", u); h != nil {
				got = h
				if i != 4 {
					t.Errorf("reported at update %d, want the fifth (1 scale + 3 flips back > 3)", i)
				}
			}
		}
		if got == nil || got.Reason != "updates" {
			t.Errorf("spec.replicas 3→4→3→4→3: %+v, want an updates report", got)
		}
	})
	t.Run("a timestamp on every reconcile", func(t *testing.T) {
		d := NewHotLoopDetector(10, 30*time.Second)
		var got *HotLoop
		for i := range 11 {
			u := Update{At: t0.Add(time.Duration(i) * 10 * time.Millisecond), Managers: []string{"op"}, Paths: []string{"status.lastReconciled"},
				Converging: Converging([]Change{ch("status.lastReconciled", "t", "u")})}
			if h := d.Observe("w", u); h != nil {
				got = h
			}
		}
		if got == nil || got.Updates != 11 {
			t.Errorf("11 timestamp writes: %+v, want a report", got)
		}
	})
}

// The diagnosis: two managers taking turns are a fight; one manager whose writes never touch
// the spec is re-triggering itself; anything else is busy.
func TestHotLoopDiagnosis(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(mk func(i int) Update) *HotLoop {
		d := NewHotLoopDetector(3, 30*time.Second)
		for i := range 10 {
			if h := d.Observe("k", mk(i)); h != nil {
				return h
			}
		}
		return nil
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	tests := []struct {
		name string
		mk   func(i int) Update
		want string
	}{
		{"fight", func(i int) Update {
			return Update{At: at(i), Managers: []string{[]string{"a", "b"}[i%2]}, Paths: []string{"spec.replicas"}, GenerationChanged: true}
		}, LoopFight},
		{"self", func(i int) Update {
			return Update{At: at(i), Managers: []string{"op"}, Paths: []string{"status.lastReconciled"}}
		}, LoopSelf},
		{"self, metadata", func(i int) Update {
			return Update{At: at(i), Managers: []string{"op"}, Paths: []string{`metadata.annotations["echo/last-seen"]`}}
		}, LoopSelf},
		{"one writer changing the spec", func(i int) Update {
			return Update{At: at(i), Managers: []string{"op"}, Paths: []string{"spec.template.metadata.annotations.x"}, GenerationChanged: true}
		}, LoopBusy},
		{"self, a person annotating once in the middle", func(i int) Update {
			if i == 1 {
				return Update{At: at(i), Managers: []string{"kubectl-annotate"}, Paths: []string{`metadata.annotations["example.com/bug"]`}}
			}
			return Update{At: at(i), Managers: []string{"op"}, Paths: []string{"status.lastReconciled"}}
		}, LoopSelf},
		{"a status written by two", func(i int) Update {
			return Update{At: at(i), Managers: []string{"op", "other"}, Paths: []string{"status.x"}}
		}, LoopBusy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(tt.mk)
			if h == nil || h.Loop != tt.want || h.Suggestion == "" {
				t.Fatalf("got %+v, want loop %q with a suggestion", h, tt.want)
			}
			if tt.want == LoopSelf && !strings.Contains(h.Suggestion, "op re-triggers itself") {
				t.Errorf("suggestion %q does not name the manager", h.Suggestion)
			}
		})
	}
}

// A hot loop ends once: after a whole window without an update (with the episode's totals), or
// when its object is deleted; loops never reported never "end".
func TestHotLoopEnded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewHotLoopDetector(3, 10*time.Second)
	for i := range 20 {
		d.Observe("hot", Update{At: t0.Add(time.Duration(i) * 100 * time.Millisecond), Managers: []string{"op"}, Paths: []string{"status.x"}})
	}
	d.Observe("calm", Update{At: t0, Managers: []string{"u"}, Paths: []string{"spec.x"}})
	if e := d.Ended(t0.Add(5 * time.Second)); len(e) != 0 {
		t.Fatalf("ended within the window: %+v", e)
	}
	if g := d.Ongoing(); len(g) != 1 || g[0].Key != "hot" {
		t.Fatalf("ongoing %+v, want the hot key", g)
	}
	e := d.Ended(t0.Add(13 * time.Second))
	want := HotLoopEnd{Key: "hot", Updates: 20, Duration: 1900 * time.Millisecond, Managers: []string{"op"}, Loop: LoopSelf}
	if len(e) != 1 || !cmpEnd(e[0], want) {
		t.Fatalf("ended %+v, want %+v", e, want)
	}
	if e := d.Ended(t0.Add(60 * time.Second)); len(e) != 0 {
		t.Errorf("ended twice: %+v", e)
	}
	// Deleted while looping.
	for i := range 5 {
		d.Observe("gone", Update{At: t0.Add(time.Minute + time.Duration(i)*time.Millisecond), Managers: []string{"op"}, Paths: []string{"status.x"}})
	}
	d.Forget("gone")
	if e := d.Ended(t0.Add(time.Minute)); len(e) != 1 || !e[0].Deleted || e[0].Updates != 5 {
		t.Errorf("ended %+v, want the deleted loop", e)
	}
}

func cmpEnd(a, b HotLoopEnd) bool {
	return a.Key == b.Key && a.Updates == b.Updates && a.Duration == b.Duration && strings.Join(a.Managers, ",") == strings.Join(b.Managers, ",") && a.Loop == b.Loop && a.Deleted == b.Deleted
}

// A fight is two writers flipping the same field, whoever writes other fields in between:
// kubectl scale and a controller flipping a Deployment's spec.replicas, the deployment
// controller's status updates landing between their flips (issue #33). And a controller's
// self-triggered status loop stays self with a person's kubectl annotate writes during it.
func TestHotLoopFightAmidOtherWriters(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 100 * time.Millisecond) }
	status := []string{"status.observedGeneration", "status.replicas"}
	tests := []struct {
		name        string
		mk          func(i int) Update
		wantLoop    string
		wantWriters []string
		wantIn      string // in the suggestion
	}{
		{"kubectl scale and a controller, status between their flips", func(i int) Update {
			switch i % 6 {
			case 0:
				return Update{At: at(i), Managers: []string{"kubectl-scale"}, Paths: []string{"spec.replicas"}, GenerationChanged: true}
			case 3:
				return Update{At: at(i), Managers: []string{"foo-controller"}, Paths: []string{"spec.replicas", `metadata.annotations["deployment.kubernetes.io/revision"]`}, GenerationChanged: true}
			case 4:
				return Update{At: at(i), Managers: []string{"kube-controller-manager"}, Paths: []string{`metadata.annotations["deployment.kubernetes.io/revision"]`}}
			}
			return Update{At: at(i), Managers: []string{"kube-controller-manager"}, Paths: status[i%2 : i%2+1]}
		}, LoopFight, []string{"kubectl-scale", "foo-controller"}, "kubectl-scale and foo-controller take turns at spec.replicas"},
		{"a status loop, two kubectl annotate writes during it", func(i int) Update {
			if i == 7 || i == 12 {
				return Update{At: at(i), Managers: []string{"kubectl-annotate"}, Paths: []string{`metadata.annotations["note"]`}}
			}
			return Update{At: at(i), Managers: []string{"widget-operator"}, Paths: []string{"status.lastReconciled"}}
		}, LoopSelf, []string{"widget-operator"}, "widget-operator re-triggers itself"},
		{"a status loop, annotate and the controller flipping one annotation", func(i int) Update {
			switch i % 3 {
			case 1:
				return Update{At: at(i), Managers: []string{"kubectl-annotate"}, Paths: []string{`metadata.annotations["note"]`}}
			case 2:
				return Update{At: at(i), Managers: []string{"op"}, Paths: []string{"status.lastReconciled", `metadata.annotations["note"]`}}
			}
			return Update{At: at(i), Managers: []string{"op"}, Paths: []string{"status.lastReconciled"}}
		}, LoopFight, []string{"kubectl-annotate", "op"}, `kubectl-annotate and op take turns at metadata.annotations["note"]`},
		{"a status loop, one kubectl annotate of a field the controller writes back", func(i int) Update {
			if i == 7 {
				return Update{At: at(i), Managers: []string{"kubectl-annotate"}, Paths: []string{`metadata.annotations["last"]`}}
			}
			return Update{At: at(i), Managers: []string{"op"}, Paths: []string{"status.lastReconciled", `metadata.annotations["last"]`}}
		}, LoopSelf, []string{"op"}, "op re-triggers itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var window []Update
			d := NewHotLoopDetector(15, 30*time.Second)
			var h *HotLoop
			for i := range 40 {
				u := tt.mk(i)
				window = append(window, u)
				if r := d.Observe("k", u); r != nil && h == nil {
					h = r
				}
			}
			if h == nil || h.Loop != tt.wantLoop || !strings.Contains(h.Suggestion, tt.wantIn) {
				t.Fatalf("detector: got %+v, want loop %q suggesting %q", h, tt.wantLoop, tt.wantIn)
			}
			// "taking turns" is said of a fight only.
			if h.Reason == "alternating" && h.Loop != LoopFight {
				t.Errorf("detector: reason %q for a %s loop", h.Reason, h.Loop)
			}
			got := Classify(window)
			if got.Loop != tt.wantLoop || !slices.Equal(got.Writers, tt.wantWriters) || !strings.Contains(got.Suggestion, tt.wantIn) {
				t.Errorf("Classify = %+v, want loop %q by %v suggesting %q", got, tt.wantLoop, tt.wantWriters, tt.wantIn)
			}
		})
	}
}

// A window whose updates name no writer (same-second writes a metadata-only watch cannot
// attribute) is busy, and its suggestion says nobody is named rather than that it is neither a
// fight nor a self-loop; one named writer's status updates in it make it self.
func TestClassifyNobodyNamed(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	var window []Update
	for i := range 12 {
		window = append(window, Update{At: t0.Add(time.Duration(i) * 50 * time.Millisecond)})
	}
	d := Classify(window)
	if d.Loop != LoopBusy || !strings.Contains(d.Suggestion, "no update names") {
		t.Errorf("nobody named: %+v, want busy saying no update names a writer", d)
	}
	window = append(window, Update{At: t0.Add(time.Second), Managers: []string{"widget-operator"}, Paths: []string{"status.lastReconciled"}})
	if d := Classify(window); d.Loop != LoopSelf {
		t.Errorf("one named status writer: %+v, want self", d)
	}
}
