package cmd

import (
	"k8s.io/client-go/rest"
)

// dynamicConfig returns the client config the informers use: no overall request timeout, which
// would cut every watch stream short; the reflector sets each watch's own timeout.
func dynamicConfig(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.Timeout = 0
	return c
}
