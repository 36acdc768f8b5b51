package cmd

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// Every client the commands build from their flags refuses writes before they leave.
func TestReadOnlyWired(t *testing.T) {
	reached := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	cf := newConfigFlags()
	*cf.APIServer = srv.URL
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Post(srv.URL+"/api/v1/namespaces/demo/configmaps", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "read-only") || reached != 0 {
		t.Errorf("a POST from the commands' client: %v (%d reached the server)", err, reached)
	}
}
