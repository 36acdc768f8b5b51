package printer

import (
	"slices"
	"strings"
)

// OutputFormat is an -o value: "" (human lines), "wide" (human lines with labels, owner and
// generations), "json", "yaml", or a template: "jsonpath=...", "jsonpath-file=...",
// "jsonpath-as-json=...", "go-template=...", "go-template-file=...", "template=...",
// "templatefile=...". Validate checks it.
type OutputFormat string

// The -o values that are not templates.
const (
	OutputHuman OutputFormat = ""
	OutputWide  OutputFormat = "wide"
	OutputJSON  OutputFormat = "json"
	OutputYAML  OutputFormat = "yaml"
)

// IsHuman reports whether the format is human lines (the default or wide): the output that
// hides noise and may drop lines for a slow reader.
func (f OutputFormat) IsHuman() bool { return f == OutputHuman || f == OutputWide }

// IsWide reports whether the format is -o wide.
func (f OutputFormat) IsWide() bool { return f == OutputWide }

// IsJSON reports whether the format is -o json (NDJSON, the recording's format).
func (f OutputFormat) IsJSON() bool { return f == OutputJSON }

// IsYAML reports whether the format is -o yaml.
func (f OutputFormat) IsYAML() bool { return f == OutputYAML }

// IsTemplate reports whether the format is a JSONPath or Go template, valid or not.
func (f OutputFormat) IsTemplate() bool {
	format, _, _ := strings.Cut(string(f), "=")
	return slices.Contains(templateFormats(), format)
}

// Validate checks the format the way kubectl does, parsing templates; its errors are
// kubectl's ("error parsing jsonpath {.x, unclosed action").
func (f OutputFormat) Validate() error {
	_, _, err := parseOutput(f)
	return err
}
