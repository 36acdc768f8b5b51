package e2e

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// `top --otlp`: the writes top ranks are spans in Jaeger as `watch --otlp` makes them. The
// widget-operator's fight over a ReplicaSet's spec.replicas: each update of the ReplicaSet is a
// ReplicaSet.Updated span in its object's trace naming its writer, the fight a
// ReplicaSet.HotLoop span; at the end every span is exported, none dropped, and Jaeger holds
// them all.
func TestTopOTLP(t *testing.T) {
	c, ns := withOperator(t)
	ctx := context.Background()
	j := testenv.StartJaeger(t)
	start := time.Now()
	p := c.RunPluginWith(t, ctx, otlpEnv(j), "top", "replicasets,widgets", "-n", ns, "-o", "json",
		"--interval", "1s", "--window", "30s", "--follow", "0", "--otlp")
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fought", Size: 1, Bug: "fight"})
	fight := awaitTopBatch(t, p, await, func(tops []map[string]any) bool {
		return slices.ContainsFunc(tops, func(m map[string]any) bool {
			return m["resource"] == "replicasets.apps" && m["loop"] == "fight" && topNum(m, "writes") >= 4
		})
	})
	var rs map[string]any
	for _, m := range fight {
		if m["resource"] == "replicasets.apps" && m["loop"] == "fight" {
			rs = m
		}
	}
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("top exited %d (%v): %s", code, err, p.Stderr())
	}
	m := regexp.MustCompile(`otlp: (\d+) spans, (\d+) exported, 0 spans dropped`).FindStringSubmatch(p.Stderr())
	if m == nil || m[1] != m[2] {
		t.Fatalf("exit summary: want every span exported, none dropped:\n%s", p.Stderr())
	}
	exported, _ := strconv.Atoi(m[1])
	var x *spanIndex
	for deadline := time.Now().Add(await); ; time.Sleep(200 * time.Millisecond) {
		x = indexSpans(j.Traces(t, "kubectl-informer", start))
		if len(x.all) >= exported || time.Now().After(deadline) {
			break
		}
	}
	if len(x.all) != exported {
		t.Fatalf("Jaeger holds %d spans, top exported %d", len(x.all), exported)
	}
	updates, fighters, loops := 0, map[string]bool{}, 0
	for _, s := range x.all {
		if objectName(s) != rs["name"] || s.Tag("k8s.namespace.name") != ns {
			continue
		}
		switch s.OperationName {
		case "ReplicaSet.Updated":
			updates++
			for _, w := range tagList(s.Tag("informer.writers")) {
				fighters[w] = true
			}
		case "ReplicaSet.HotLoop":
			loops++
		}
	}
	t.Logf("%d spans; %s/%s: %d Updated spans by %v, %d HotLoop spans; top ranked %d writes", len(x.all), ns, rs["name"], updates, fighters, loops, topNum(rs, "writes"))
	if updates < topNum(rs, "writes") || !fighters["widget-operator"] || !fighters["kube-controller-manager"] || loops == 0 {
		t.Errorf("the fight in Jaeger: %d Updated spans (top ranked %d writes) by %v, %d HotLoop spans; want every write, both fighters, the loop",
			updates, topNum(rs, "writes"), fighters, loops)
	}
}
