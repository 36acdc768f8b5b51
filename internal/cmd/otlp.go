package cmd

import (
	"github.com/spf13/pflag"

	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
)

// OTLPOptions is --otlp, shared by watch, replay and top: export the lines as OpenTelemetry spans
// over OTLP, configured by the standard OTEL_EXPORTER_OTLP_* variables.
type OTLPOptions struct {
	Enabled bool
}

// AddFlags registers --otlp.
func (o *OTLPOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.Enabled, "otlp", o.Enabled, "Export every line as OpenTelemetry spans over OTLP (docs/tracing.md): each object's history one trace, each reconcile a span linked to the events that triggered it. Where to is OpenTelemetry's standard environment: OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT), OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or grpc), OTEL_EXPORTER_OTLP_INSECURE, OTEL_EXPORTER_OTLP_CERTIFICATE. A collector that is down or slow costs spans (counted in the summary), never the watch.")
}

// Validate checks the environment --otlp reads, so a typo fails before the watch starts.
func (o *OTLPOptions) Validate() error {
	if !o.Enabled {
		return nil
	}
	_, err := tracing.Protocol()
	return err
}
