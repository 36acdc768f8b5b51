package main

import (
	"strings"
	"testing"
)

// Lines as `go test -json` writes them (cmd/test2json): a pass, a fail with a subtest, a skip,
// and a test cut off by the package's timeout panic.
const run1 = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"run","Package":"p","Test":"TestB/sub"}
{"Action":"output","Package":"p","Test":"TestB/sub","Output":"    b_test.go:9: no line with the thing within 1m0s\n"}
{"Action":"fail","Package":"p","Test":"TestB/sub","Elapsed":1}
{"Action":"fail","Package":"p","Test":"TestB","Elapsed":1}
{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"skip","Package":"p","Test":"TestC","Elapsed":0}
{"Action":"fail","Package":"p","Elapsed":3}
`

const run2 = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Test":"TestB","Elapsed":1}
{"Action":"run","Package":"p","Test":"TestD"}
{"Action":"output","Package":"p","Output":"panic: test timed out after 40m0s\n"}
{"Action":"fail","Package":"p","Elapsed":2400}
`

func TestTally(t *testing.T) {
	r1, err := parseRun(strings.NewReader(run1))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := parseRun(strings.NewReader(run2))
	if err != nil {
		t.Fatal(err)
	}
	if r1.tests["TestB"] != fail || r1.tests["TestB/sub"] != "" || r1.tests["TestC"] != skip {
		t.Errorf("run 1: %v", r1.tests)
	}
	if r2.tests["TestD"] != fail || r2.tests[packageTest] != "" {
		t.Errorf("run 2: a test cut off by the timeout must count as failed: %v", r2.tests)
	}
	ta := newTally()
	ta.add(1, false, r1)
	ta.add(2, true, r2)
	got := ta.table(config{run: ".", pkg: "./test/e2e/", burnRun: 2})
	for _, want := range []string{
		"| TestA | 2/2 | 100% |  |",
		"| TestB | 1/2 | 50% | 1 |",
		"| TestC | 0/0 | skipped |  |",
		"| TestD | 0/1 | 0% | 2* |",
		"; run 2 beside a neighbour burning every core",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	fl := ta.flaky()
	if len(fl) != 2 || fl[0].test != "TestB" || !strings.Contains(fl[0].output, "no line with the thing") || fl[1].test != "TestD" {
		t.Errorf("failures %+v", fl)
	}
}

// A package that fails with no test failed (TestMain could not start the cluster) is a row.
func TestTallyPackageFailure(t *testing.T) {
	r, err := parseRun(strings.NewReader(`{"Action":"output","Package":"p","Output":"e2e: start cluster: boom\n"}
{"Action":"fail","Package":"p","Elapsed":1}
`))
	if err != nil {
		t.Fatal(err)
	}
	if r.tests[packageTest] != fail || !strings.Contains(r.output[packageTest].String(), "boom") {
		t.Errorf("%v", r.tests)
	}
}
