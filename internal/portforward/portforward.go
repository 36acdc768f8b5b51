// Package portforward keeps a local port on 127.0.0.1 forwarded to a pod's port through the API
// server, as `kubectl port-forward` does: the object (pod/NAME, deploy/NAME, any kind kubectl
// port-forward accepts) is resolved to a pod by kubectl's own helper, and client-go's port
// forwarder talks to the pod's portforward subresource (WebSockets first, SPDY as fallback).
// When the forward is lost (the pod went away), the object is resolved again and the same local
// port forwarded to the new pod.
package portforward

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/kubectl/pkg/polymorphichelpers"
	streamhttp "k8s.io/streaming/pkg/httpstream"
)

// Target is what to forward to: TYPE/NAME as kubectl port-forward takes it, and the pod's port
// (a number or a container port's name), with the scheme and path of the metrics URL behind it.
type Target struct {
	Namespace string // "" for the kubeconfig's (or -n's) namespace
	Ref       string // e.g. deploy/my-controller-manager
	Port      string // e.g. 8443 or https
	Scheme    string // "https", "http", or "" to find out
	Path      string // e.g. /metrics
}

func (t Target) String() string {
	if t.Namespace != "" {
		return t.Namespace + "/" + t.Ref + ":" + t.Port
	}
	return t.Ref + ":" + t.Port
}

// ParseTarget reads [http://|https://][NAMESPACE/]TYPE/NAME:PORT[/PATH]; the path defaults to
// /metrics.
func ParseTarget(s string) (Target, error) {
	var t Target
	rest := s
	for _, scheme := range []string{"https", "http"} {
		if r, ok := strings.CutPrefix(rest, scheme+"://"); ok {
			t.Scheme, rest = scheme, r
			break
		}
	}
	ref, portPath, ok := strings.Cut(rest, ":")
	if parts := strings.Split(ref, "/"); len(parts) == 3 && parts[0] != "" {
		t.Namespace, ref = parts[0], parts[1]+"/"+parts[2]
	}
	typ, name, _ := strings.Cut(ref, "/")
	if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
		return Target{}, fmt.Errorf("%q must be [NAMESPACE/]TYPE/NAME:PORT[/PATH], e.g. deploy/my-controller-manager:8443 or pod/web-0:8080/metrics", s)
	}
	port, path, hasPath := strings.Cut(portPath, "/")
	t.Ref, t.Port, t.Path = ref, port, "/"+path
	if !hasPath {
		t.Path = "/metrics"
	}
	if n, err := strconv.Atoi(port); err == nil {
		if n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("%q: port %d out of range", s, n)
		}
	} else if port == "" || strings.ContainsAny(port, " /?#") {
		return Target{}, fmt.Errorf("%q: the port must be a number or a container port's name", s)
	}
	return t, nil
}

// PodTimeout bounds the wait for a running pod of the object (kubectl's --pod-running-timeout).
const PodTimeout = 20 * time.Second

// Forward is a running port forward.
type Forward struct {
	// LocalPort is the port on 127.0.0.1; it stays the same across reconnections.
	LocalPort int

	mu  sync.Mutex
	pod string // namespace/name of the pod forwarded to
}

// Pod is the pod the forward reaches now, as namespace/name.
func (f *Forward) Pod() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pod
}

// Forwarder opens forwards with a kubeconfig's credentials (the API server's, never sent to the
// forwarded port).
type Forwarder struct {
	Getter    genericclioptions.RESTClientGetter
	Config    *rest.Config
	Namespace string
	// OnLost is called when a forward is lost or cannot be reopened (once per streak), and
	// OnRestored when it works again; both may be nil.
	OnLost     func(err error)
	OnRestored func(pod string)
}

// Open forwards a local port to the target's pod and keeps it forwarded until ctx ends. It
// returns once the first forward is ready, or its error.
func (fw *Forwarder) Open(ctx context.Context, t Target) (*Forward, error) {
	cs, err := kubernetes.NewForConfig(fw.Config)
	if err != nil {
		return nil, err
	}
	f := &Forward{}
	done, err := fw.forwardOnce(ctx, cs, t, f)
	if err != nil {
		return nil, err
	}
	go fw.keep(ctx, cs, t, f, done)
	return f, nil
}

// keep reopens the forward whenever it is lost, with a backoff from 1s to 30s.
func (fw *Forwarder) keep(ctx context.Context, cs kubernetes.Interface, t Target, f *Forward, done <-chan error) {
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-done:
			if ctx.Err() != nil {
				return
			}
			if fw.OnLost != nil {
				fw.OnLost(fmt.Errorf("port-forward to %s (pod %s) lost: %w", t, f.Pod(), errOrLost(err)))
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			var err error
			done, err = fw.forwardOnce(ctx, cs, t, f)
			if err == nil {
				backoff = time.Second
				if fw.OnRestored != nil {
					fw.OnRestored(f.Pod())
				}
				break
			}
			backoff = min(2*backoff, 30*time.Second)
		}
	}
}

func errOrLost(err error) error {
	if err == nil {
		return portforward.ErrLostConnectionToPod
	}
	return err
}

// forwardOnce resolves the target to a running pod and forwards f.LocalPort (0 the first time:
// any free port) to it. The returned channel gets ForwardPorts' result when the forward ends.
func (fw *Forwarder) forwardOnce(ctx context.Context, cs kubernetes.Interface, t Target, f *Forward) (<-chan error, error) {
	pod, port, err := fw.resolve(t)
	if err != nil {
		return nil, err
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward")
	dialer, err := dialerFor(fw.Config, req.URL())
	if err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	pf, err := portforward.NewOnAddressesForStreamingWithContext(ctx, dialer, []string{"127.0.0.1"},
		[]string{fmt.Sprintf("%d:%d", f.LocalPort, port)}, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-done:
		return nil, fmt.Errorf("port-forward to %s (pod %s/%s): %w", t, pod.Namespace, pod.Name, errOrLost(err))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		return nil, fmt.Errorf("port-forward to %s: no local port (%v)", t, err)
	}
	f.mu.Lock()
	f.LocalPort, f.pod = int(ports[0].Local), pod.Namespace+"/"+pod.Name
	f.mu.Unlock()
	return done, nil
}

// resolve finds the running pod of t.Ref and the number of t.Port, as kubectl port-forward does.
func (fw *Forwarder) resolve(t Target) (*corev1.Pod, int, error) {
	obj, err := resource.NewBuilder(fw.Getter).
		WithScheme(scheme.Scheme, scheme.Scheme.PrioritizedVersionsAllGroups()...).
		ContinueOnError().
		NamespaceParam(cmp.Or(t.Namespace, fw.Namespace)).DefaultNamespace().
		ResourceNames("pods", t.Ref).
		Do().Object()
	if err != nil {
		return nil, 0, err
	}
	pod, err := polymorphichelpers.AttachablePodForObjectFn(fw.Getter, obj, PodTimeout)
	if err != nil {
		return nil, 0, err
	}
	if pod.Status.Phase != corev1.PodRunning {
		return nil, 0, fmt.Errorf("unable to forward port because pod %s/%s is not running. Current status=%v", pod.Namespace, pod.Name, pod.Status.Phase)
	}
	if n, err := strconv.Atoi(t.Port); err == nil {
		return pod, n, nil
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == t.Port && p.Protocol != corev1.ProtocolUDP {
				return pod, int(p.ContainerPort), nil
			}
		}
	}
	return nil, 0, fmt.Errorf("pod %s/%s has no container port named %q", pod.Namespace, pod.Name, t.Port)
}

// dialerFor is kubectl port-forward's dialer: WebSockets (SPDY tunnelled) first, SPDY when the
// server cannot upgrade to WebSockets.
func dialerFor(cfg *rest.Config, u *neturl.URL) (streamhttp.Dialer, error) {
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, err
	}
	spdyDialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	tunneling, err := portforward.NewSPDYOverWebsocketDialerForStreaming(u, cfg)
	if err != nil {
		return nil, err
	}
	return portforward.NewFallbackDialerForStreaming(tunneling, spdyDialer, func(err error) bool {
		return streamhttp.IsUpgradeFailure(err) || streamhttp.IsHTTPSProxyError(err)
	}), nil
}
