package cmd

import (
	"strings"
	"testing"
)

func TestOTLPValidate(t *testing.T) {
	tests := []struct {
		name     string
		enabled  bool
		protocol string
		wantErr  string
	}{
		{name: "off, anything in the environment", protocol: "carrier-pigeon"},
		{name: "default protocol", enabled: true},
		{name: "grpc", enabled: true, protocol: "grpc"},
		{name: "http/json is not served by the Go SDK", enabled: true, protocol: "http/json", wantErr: `unsupported OTLP protocol "http/json" (OTEL_EXPORTER_OTLP_PROTOCOL): use grpc or http/protobuf`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tt.protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
			err := (&OTLPOptions{Enabled: tt.enabled}).Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
