// Command etcd is the upstream etcd server, built from the Go module proxy (a plain go install
// of etcd fails on its replace directives, so this module wraps etcdmain instead).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
