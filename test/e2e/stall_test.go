package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// stallingProxy is a plain-HTTP proxy to the API server (as the admin) that drops the bookmark
// ending every streaming list, as some proxies and old servers do.
func stallingProxy(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host, out.Host = upstream.Scheme, upstream.Host, upstream.Host
		out.Header.Del("Accept-Encoding")
		resp, err := transport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		flusher, _ := w.(http.Flusher)
		streaming := r.URL.Query().Get("sendInitialEvents") == "true"
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadBytes('\n')
			dropped := streaming && bytes.Contains(line, []byte("k8s.io/initial-events-end"))
			if len(line) > 0 && !dropped {
				_, _ = w.Write(line)
				if flusher != nil {
					flusher.Flush()
				}
			}
			if err != nil {
				return // io.EOF or a broken stream: either way the response is over
			}
		}
	}))
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A streaming list whose initial-events-end bookmark never comes: the plugin says so after
// --sync-timeout and falls back to LIST+WATCH instead of hanging.
func TestStreamingListStall(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, cluster)
	pre := createConfigMaps(t, cluster.Clientset, ns, "a", "b")
	kc := stallingProxy(t, cluster.RESTConfig)
	t.Setenv("KUBE_FEATURE_WatchListClient", "true")
	// --wire json: the proxy finds the bookmark by reading the stream line by line, which is
	// JSON's framing; a protobuf stream has none (a frame can sit in the proxy's buffer waiting
	// for a newline byte). The fallback is the reflector's, the same on either wire.
	p := cluster.RunPluginAs(t, ctx, kc, "watch", "cm", "-n", ns, "-o", "json", "--sync-timeout", "2s", "--wire", "json")
	w := p.AwaitJSON(t, await, is("Watch", ""))
	wantField(t, w, "sendInitialEvents", true)
	e := p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Error" && m["reason"] == "SyncTimeout" })
	if e["message"] == "" {
		t.Errorf("SyncTimeout without a message: %v", e)
	}
	l := p.AwaitJSON(t, await, is("List", ""))
	wantField(t, l, "initial", true)
	wantField(t, l, "items", float64(2))
	for range pre {
		a := p.AwaitJSON(t, await, is("Added", ""))
		wantField(t, a, "initialList", true)
		wantField(t, a, "resourceVersion", pre[a["name"].(string)].ResourceVersion)
	}
	synced := p.AwaitJSON(t, await, is("Synced", ""))
	wantField(t, synced, "listMode", "list")
	wantField(t, synced, "fellBack", true)
	createConfigMaps(t, cluster.Clientset, ns, "live")
	p.AwaitJSON(t, await, is("Added", "live"))
}
