package audit

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// MaxWebhookBody bounds one request of the API server's audit webhook (a batch of events); a
// larger one is refused (413) and said once.
const MaxWebhookBody = 64 << 20

// Files of a webhook directory.
const (
	WebhookKubeconfig = "webhook.kubeconfig"
	webhookCert       = "tls.crt"
	webhookKey        = "tls.key"
	webhookToken      = "token"
)

// WebhookFiles makes (once) in dir what the API server's audit webhook backend needs to send to
// https://listen/audit: a self-signed certificate for the listen host, 127.0.0.1 and localhost,
// a bearer token, and the kubeconfig to give the API server as --audit-webhook-config-file
// (returned). Made files are kept and reused, so the API server's configuration outlives a run.
func WebhookFiles(dir, listen string) (string, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("--audit-webhook-listen %q: %w", listen, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	certPath, keyPath, tokenPath := filepath.Join(dir, webhookCert), filepath.Join(dir, webhookKey), filepath.Join(dir, webhookToken)
	if _, err := tls.LoadX509KeyPair(certPath, keyPath); err != nil {
		if err := writeCert(certPath, keyPath, host); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(tokenPath); err != nil {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		if err := os.WriteFile(tokenPath, []byte(hex.EncodeToString(b)), 0o600); err != nil {
			return "", err
		}
	}
	caPEM, err := os.ReadFile(certPath)
	if err != nil {
		return "", err
	}
	token, err := os.ReadFile(tokenPath)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubectl-informer"] = &clientcmdapi.Cluster{Server: "https://" + listen + "/audit", CertificateAuthorityData: caPEM}
	cfg.AuthInfos["kube-apiserver"] = &clientcmdapi.AuthInfo{Token: string(token)}
	cfg.Contexts["audit"] = &clientcmdapi.Context{Cluster: "kubectl-informer", AuthInfo: "kube-apiserver"}
	cfg.CurrentContext = "audit"
	kc := filepath.Join(dir, WebhookKubeconfig)
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		return "", err
	}
	return kc, os.Chmod(kc, 0o600)
}

func writeCert(certPath, keyPath, host string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "kubectl-informer audit webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else if host != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
}

// Webhook is a listener for the API server's audit webhook: HTTPS with its directory's
// certificate, the bearer token of its kubeconfig required.
type Webhook struct {
	// Addr is where it listens; Kubeconfig the file for the API server's
	// --audit-webhook-config-file.
	Addr, Kubeconfig string
	ln               net.Listener
	cert             tls.Certificate
	token            []byte
}

// ListenWebhook makes dir's files (WebhookFiles) and listens on listen.
// A port 0 is chosen by the system, and the kubeconfig names the one chosen.
func ListenWebhook(listen, dir string) (_ *Webhook, err error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("--audit-webhook-listen: %w", err)
	}
	defer func() {
		if err != nil {
			ln.Close()
		}
	}()
	host, _, _ := net.SplitHostPort(listen)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	addr := net.JoinHostPort(host, port)
	kc, err := WebhookFiles(dir, addr)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, webhookCert), filepath.Join(dir, webhookKey))
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(filepath.Join(dir, webhookToken))
	if err != nil {
		return nil, err
	}
	return &Webhook{Addr: addr, Kubeconfig: kc, ln: ln, cert: cert, token: token}, nil
}

// Serve hands each event of each batch the API server sends to event (only writes: see
// LineReader.WritesOnly), until ctx ends (the listener is closed then).
func (wh *Webhook) Serve(ctx context.Context, event func(*Event), notice func(string), writesOnly bool) error {
	h := &webhook{want: []byte("Bearer " + string(wh.token)), reader: &LineReader{Source: "--audit-webhook-listen " + wh.Addr, Notice: notice, Event: event, WritesOnly: writesOnly}}
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{wh.cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)} // a client's bad handshake is not the user's business
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	if err := srv.ServeTLS(wh.ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close closes the listener of a Webhook never served.
func (wh *Webhook) Close() error { return wh.ln.Close() }

// webhook is the handler: one batch (an audit.k8s.io/v1 EventList) per POST.
type webhook struct {
	want   []byte
	mu     sync.Mutex // reader is not safe for concurrent use; the API server sends batches in turn
	reader *LineReader
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), h.want) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST an audit.k8s.io/v1 EventList", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxWebhookBody+1))
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil || len(body) > MaxWebhookBody {
		h.reader.skip(fmt.Sprintf("a batch of more than %d MiB (the bound on one webhook request), or a broken one: skipped", MaxWebhookBody>>20))
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		return
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		h.reader.skip("a batch that is no audit.k8s.io EventList: " + errText(err))
		http.Error(w, "not an EventList", http.StatusBadRequest)
		return
	}
	for _, item := range list.Items {
		if len(item) >= MaxLine {
			h.reader.line++
			h.reader.skip(fmt.Sprintf("event %d is longer than %d KiB (the bound on one audit event): skipped", h.reader.line, MaxLine>>10))
			continue
		}
		h.reader.Line(item, time.Time{})
	}
	w.WriteHeader(http.StatusOK)
}
