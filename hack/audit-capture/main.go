// Command audit-capture produces the real audit logs internal/audit's benchmark reads
// (internal/audit/testdata): it starts the test control plane (hack/testcluster) with its audit
// log on (test/testenv's AuditPolicy) and kube-controller-manager, writes ConfigMaps (at
// RequestResponse level) and Secrets (Metadata level) as the admin, polls them, and splits the
// log by level.
//
//	KUBEBUILDER_ASSETS=$(hack/testcluster/build.sh) go run ./hack/audit-capture -out internal/audit/testdata
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

func main() {
	out := flag.String("out", "internal/audit/testdata", "directory for metadata.log and requestresponse.log")
	lines := flag.Int("lines", 500, "lines of each level to keep")
	flag.Parse()
	if err := run(*out, *lines); err != nil {
		fmt.Fprintln(os.Stderr, "audit-capture:", err)
		os.Exit(1)
	}
}

func run(out string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := testenv.Start(ctx, testenv.Options{Audit: true, Controllers: true})
	if err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()
	cms, secrets := c.Clientset.CoreV1().ConfigMaps("default"), c.Clientset.CoreV1().Secrets("default")
	for i := range n / 4 {
		name := fmt.Sprint("capture-", i)
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		cm.Data["k"] = "w"
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return err
		}
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"password": "x"}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := secrets.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if err := secrets.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(c.AuditLogPath)
	if err != nil {
		return err
	}
	byLevel := map[string]*bytes.Buffer{"Metadata": {}, "RequestResponse": {}}
	count := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct{ Level string }
		if json.Unmarshal(sc.Bytes(), &e) != nil || byLevel[e.Level] == nil || count[e.Level] >= n {
			continue
		}
		count[e.Level]++
		byLevel[e.Level].Write(sc.Bytes())
		byLevel[e.Level].WriteByte('\n')
	}
	for level, file := range map[string]string{"Metadata": "metadata.log", "RequestResponse": "requestresponse.log"} {
		if err := os.WriteFile(filepath.Join(out, file), byLevel[level].Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d lines\n", file, count[level])
	}
	return nil
}
