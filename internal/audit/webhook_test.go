package audit

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// The audit webhook: the API server's batches (EventLists) over HTTPS, with the token of the
// kubeconfig made for it; a request without it, or over the bound, gives nothing.
func TestWebhook(t *testing.T) {
	dir := t.TempDir()
	wh, err := ListenWebhook("127.0.0.1:0", dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(wh.Kubeconfig); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %s: %v %v", wh.Kubeconfig, fi, err)
	}
	kc, err := clientcmd.LoadFromFile(wh.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if cluster.Server != "https://"+wh.Addr+"/audit" {
		t.Errorf("kubeconfig server %q, listening on %s", cluster.Server, wh.Addr)
	}
	token := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo].Token
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cluster.CertificateAuthorityData)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: time.Minute}

	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var ids, notices []string
	done := make(chan error, 1)
	go func() {
		done <- wh.Serve(ctx, func(e *Event) { mu.Lock(); ids = append(ids, e.AuditID); mu.Unlock() },
			func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }, false)
	}()
	post := func(auth string, body []byte) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, cluster.Server, bytes.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	batch := fmt.Sprintf(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[%s,%s]}`,
		request("a", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200), request("b", StageResponseComplete, "get", "u", "", "/x", "", "", 0, 200))
	if code := post("wrong", []byte(batch)); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", code)
	}
	if code := post(token, []byte(batch)); code != http.StatusOK {
		t.Errorf("a batch: %d", code)
	}
	if code := post(token, bytes.Repeat([]byte("x"), MaxWebhookBody+1)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a batch over the bound: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(ids, ",") != "a,b" || len(notices) != 1 || !strings.Contains(notices[0], "more than 64 MiB") {
		t.Errorf("events %v, notices %q", ids, notices)
	}
	// A second run reuses the certificate and token: the API server's configuration holds.
	again, err := ListenWebhook("127.0.0.1:0", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	kc2, _ := clientcmd.LoadFromFile(again.Kubeconfig)
	if !bytes.Equal(kc2.Clusters[kc2.Contexts[kc2.CurrentContext].Cluster].CertificateAuthorityData, cluster.CertificateAuthorityData) ||
		kc2.AuthInfos[kc2.Contexts[kc2.CurrentContext].AuthInfo].Token != token {
		t.Error("a second listen made a new certificate or token")
	}
	if _, err := os.Stat(filepath.Join(dir, webhookKey)); err != nil {
		t.Error(err)
	}
}
