//go:build windows

package reenactrun

import (
	"context"
	"errors"
)

// controlPlane: the control plane's processes are started and stopped as process groups, which
// Windows has not; reenact there plays into a cluster named with --context.
func (o *Config) controlPlane(context.Context, func(error)) (kubeconfig, kubeContext string, stop func(), err error) {
	return "", "", nil, errors.New("--control-plane is not available on Windows: run reenact with --context against a cluster of your own; nothing was written")
}
