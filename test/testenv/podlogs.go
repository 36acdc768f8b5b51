package testenv

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterLogsGVR is kwok's ClusterLogs resource.
var ClusterLogsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}

// ServeNamespaceLogs makes kwok serve file (in the kubelet's CRI log format: NewCRILogWriter) as
// the log of every container of every pod in namespace on kwok's nodes, so that `kubectl logs`
// through the API server (or the plugin's --controller-logs-from) reads a process's log on this
// machine. It needs a cluster with Nodes > 0 whose kwok serves its logs CRDs.
func (c *Cluster) ServeNamespaceLogs(ctx context.Context, namespace, file string) error {
	if err := c.kwokCRDsReady(); err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs",
		"metadata": map[string]any{"name": namespace + "-logs"},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{namespace}},
			"logs":     []any{map[string]any{"logsFile": file, "follow": true}},
		},
	}}
	_, err := c.Dynamic.Resource(ClusterLogsGVR).Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// criLogWriter writes each line written to it as a kubelet writes a container's line to the
// container's log file (CRI format): `2006-01-02T15:04:05.999999999Z stdout F LINE`.
type criLogWriter struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte
}

// NewCRILogWriter returns a writer that writes each complete line written to it to w in the
// kubelet's CRI log format, stamped with the time it was written; kwok's Logs serve such a file.
func NewCRILogWriter(w io.Writer) io.Writer { return &criLogWriter{w: w} }

func (c *criLogWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, b...)
	var out []byte
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		out = append(out, time.Now().UTC().Format(time.RFC3339Nano)+" stdout F "...)
		out = append(out, c.partial[:i+1]...)
		c.partial = c.partial[i+1:]
	}
	c.partial = append([]byte(nil), c.partial...)
	if len(out) > 0 {
		if _, err := c.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
