package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
)

// Jaeger is a Jaeger v2 all-in-one (hack/testcluster/build-jaeger.sh) with in-memory storage,
// its OTLP receivers and its query API on loopback ports picked at run time.
type Jaeger struct {
	// OTLPHTTP is the OTLP/HTTP receiver's base URL (OTEL_EXPORTER_OTLP_ENDPOINT), OTLPGRPC
	// the OTLP/gRPC one's; QueryURL the HTTP query API's.
	OTLPHTTP, OTLPGRPC, QueryURL string
	cmd                          *exec.Cmd
	log                          *TailBuffer
	done                         chan struct{}
	dir                          string // its configuration
}

// jaegerConfig is a collector-style configuration: OTLP in, in-memory storage, the query API.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:%d
  jaeger_query:
    storage:
      traces: mem
    max_clock_skew_adjust: 0s
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// JaegerBinary is the Jaeger binary: $JAEGER_BINARY, else the one hack/testcluster/build-jaeger.sh
// builds (or finds in its cache).
func JaegerBinary(ctx context.Context) (string, error) {
	if b := os.Getenv("JAEGER_BINARY"); b != "" {
		return b, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "testcluster", "build-jaeger.sh")).Output()
	if err != nil {
		return "", fmt.Errorf("hack/testcluster/build-jaeger.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// StartJaeger starts Jaeger and waits for its query API; it is stopped at the test's end.
func StartJaeger(t testing.TB) *Jaeger {
	t.Helper()
	j, err := RunJaeger(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Stop)
	return j
}

// RunJaeger starts Jaeger and waits for its query API (at most a minute); Stop stops it.
func RunJaeger(ctx context.Context) (*Jaeger, error) {
	bin, err := JaegerBinary(ctx)
	if err != nil {
		return nil, err
	}
	ports, err := controlplane.FreePorts(5)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubectl-informer-jaeger-")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, ports[0], ports[1], ports[2], ports[3], ports[4]), 0o600); err != nil {
		return nil, err
	}
	j := &Jaeger{OTLPGRPC: fmt.Sprintf("http://127.0.0.1:%d", ports[3]), OTLPHTTP: fmt.Sprintf("http://127.0.0.1:%d", ports[4]),
		QueryURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]), log: newTail(64 << 10), done: make(chan struct{}), dir: dir}
	j.cmd = exec.Command(bin, "--config=file:"+cfg)
	j.cmd.Stdout, j.cmd.Stderr = j.log, j.log
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := j.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	go func() { _ = j.cmd.Wait(); close(j.done) }()
	err = waitFor(ctx, 60*time.Second, func(ctx context.Context) (bool, error) {
		select {
		case <-j.done:
			return false, fmt.Errorf("jaeger exited: %s", j.log.String())
		default:
		}
		resp, err := http.Get(j.QueryURL + "/api/services") //nolint:noctx // loopback, bounded by waitFor
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		j.Stop()
		return nil, fmt.Errorf("jaeger did not start: %w\n%s", err, j.log.String())
	}
	return j, nil
}

// Stop kills Jaeger (its process group, by pid) and waits for it: a collector gone at once.
func (j *Jaeger) Stop() {
	defer os.RemoveAll(j.dir)
	select {
	case <-j.done:
		return
	default:
	}
	_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
	<-j.done
}

// JaegerSpan is a span as Jaeger's query API returns it (times in microseconds).
type JaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64 `json:"startTime"`
	Duration  int64 `json:"duration"`
	Tags      []struct {
		Key   string `json:"key"`
		Type  string `json:"type"`
		Value any    `json:"value"`
	} `json:"tags"`
	ProcessID string `json:"processID"`
}

// Tag is the value of a span's tag as text ("" when it has none); a list's is its JSON.
func (s JaegerSpan) Tag(k string) string {
	for _, t := range s.Tags {
		if t.Key == k {
			if v, ok := t.Value.(string); ok {
				return v
			}
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// JaegerTrace is one trace: its spans and the processes (services, resource tags) they came from.
type JaegerTrace struct {
	TraceID   string       `json:"traceID"`
	Spans     []JaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
		Tags        []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"tags"`
	} `json:"processes"`
}

// Traces returns the traces of service Jaeger holds with a span since since.
func (j *Jaeger) Traces(t testing.TB, service string, since time.Time) []JaegerTrace {
	t.Helper()
	q := url.Values{"service": {service}, "limit": {"100000"}, "start": {fmt.Sprint(since.Add(-time.Hour).UnixMicro())},
		"end": {fmt.Sprint(time.Now().Add(time.Hour).UnixMicro())}}
	resp, err := http.Get(j.QueryURL + "/api/traces?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data   []JaegerTrace `json:"data"`
		Errors any           `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("jaeger /api/traces: %d %v %v", resp.StatusCode, err, body.Errors)
	}
	return body.Data
}
