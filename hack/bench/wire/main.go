// Command wire is the wire limit hack/bench compares kubectl-informer against: what the server
// can send. It opens the streaming list the plugin's informers open (a WATCH with
// sendInitialEvents=true, resourceVersionMatch=NotOlderThan, allowWatchBookmarks=true) in
// protobuf, for one namespaced resource, and copies the bytes without decoding an object: it
// only cuts the stream into its length-prefixed frames (a 4-byte length, no allocation), and
// finds the BOOKMARK that ends the initial events by the bytes of its annotation
// (k8s.io/initial-events-end: "true").
//
// By default it asks for the stream uncompressed: the least work that receives the objects'
// bytes. With -gzip it asks as client-go does by default (Accept-Encoding: gzip, what the plugin
// and kubectl send unless --disable-compression): kube-apiserver then gzips the watch stream and
// the transport inflates it, which on loopback costs both ends CPU and the sync about 0.3 s per
// 20,000 ConfigMaps (docs/performance.md).
//
//	wire -kubeconfig KUBECONFIG -n NAMESPACE [-resource configmaps] [-group ""] [-version v1] [-gzip]
//
// Its stdout: nothing per object of the initial events, then one line in the shape of the
// plugin's -o json Synced line with items, the frames counted before that bookmark; after
// it, one line per event ("MODIFIED bench/bench-000042"), the name found by stepping over the
// frame's protobuf fields (follow.go). It stops on SIGINT or SIGTERM, and says on stderr how
// many frames and bytes it read, and whether the server compressed them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file")
	namespace := flag.String("n", "default", "namespace")
	group := flag.String("group", "", "API group")
	version := flag.String("version", "v1", "API version")
	plural := flag.String("resource", "configmaps", "resource (plural)")
	gzip := flag.Bool("gzip", false, "accept a gzipped stream, as client-go does by default (the transport inflates it)")
	flag.Parse()
	if err := run(*kubeconfig, *namespace, resource{*group, *version, *plural}, *gzip); err != nil {
		fmt.Fprintln(os.Stderr, "wire:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace string, res resource, gzip bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.DisableCompression = !gzip
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return err
	}
	prefix := "/api"
	if res.group != "" {
		prefix = "/apis/" + res.group
	}
	u.Path = path.Join(u.Path, prefix, res.version, "namespaces", namespace, res.plural)
	u.RawQuery = url.Values{
		"watch":                {"true"},
		"sendInitialEvents":    {"true"},
		"resourceVersionMatch": {"NotOlderThan"},
		"allowWatchBookmarks":  {"true"},
	}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf;stream=watch")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u.Path, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf;stream=watch" {
		return fmt.Errorf("GET %s: the server answered %q, not the protobuf watch stream", u.Path, ct)
	}
	fr := newFrameReader(resp.Body, 1<<20, 64<<20)
	err = follow(fr, os.Stdout, res)
	fmt.Fprintf(os.Stderr, "wire: %d frames, %d bytes (gzipped by the server: %v)\n", fr.Frames, fr.Bytes, resp.Uncompressed)
	if ctx.Err() != nil {
		return nil // stopped
	}
	if errors.Is(err, io.EOF) {
		return errors.New("the server ended the watch")
	}
	return err
}
