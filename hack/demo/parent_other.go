//go:build !linux

package main

// dieWithParent is Linux only: elsewhere stop `go run ./hack/demo` with Ctrl-C (the terminal
// signals the demo itself).
func dieWithParent() {}
