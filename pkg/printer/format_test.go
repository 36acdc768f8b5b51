package printer

import "testing"

func TestOutputFormat(t *testing.T) {
	tests := []struct {
		f                                      OutputFormat
		human, wide, json, yaml, tmpl, invalid bool
	}{
		{f: "", human: true},
		{f: "wide", human: true, wide: true},
		{f: "json", json: true},
		{f: "yaml", yaml: true},
		{f: "jsonpath={.type}", tmpl: true},
		{f: "jsonpath-as-json={.type}", tmpl: true},
		{f: "go-template={{.type}}", tmpl: true},
		{f: "jsonpath={.type", tmpl: true, invalid: true},
		{f: "JSON", invalid: true},
		{f: "custom-columns=A:B", invalid: true},
	}
	for _, tt := range tests {
		t.Run(string(tt.f), func(t *testing.T) {
			got := []bool{tt.f.IsHuman(), tt.f.IsWide(), tt.f.IsJSON(), tt.f.IsYAML(), tt.f.IsTemplate(), tt.f.Validate() != nil}
			want := []bool{tt.human, tt.wide, tt.json, tt.yaml, tt.tmpl, tt.invalid}
			names := []string{"IsHuman", "IsWide", "IsJSON", "IsYAML", "IsTemplate", "invalid"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s = %v, want %v", names[i], got[i], want[i])
				}
			}
		})
	}
}
