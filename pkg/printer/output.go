package printer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

type outputKind int

const (
	outputHuman outputKind = iota
	outputWide
	outputJSON
	outputYAML
	outputTemplate
)

// templateFormats are kubectl's template output formats: cli-runtime's JSONPath and Go
// template print flags.
func templateFormats() []string {
	f := append(genericclioptions.NewJSONPathPrintFlags("", true).AllowedFormats(),
		genericclioptions.NewGoTemplatePrintFlags().AllowedFormats()...)
	slices.Sort(f)
	return f
}

// AllowedOutputs lists the -o values, as kubectl's error names them (templates take `=TEMPLATE`).
func AllowedOutputs() []string {
	f := append([]string{"json", "wide", "yaml"}, templateFormats()...)
	slices.Sort(f)
	return f
}

// validateOutput checks an -o value as OutputFormat.Validate does.
func validateOutput(output string) error { return OutputFormat(output).Validate() }

func parseOutput(f OutputFormat) (outputKind, printers.ResourcePrinter, error) {
	switch f {
	case OutputHuman:
		return outputHuman, nil, nil
	case OutputWide:
		return outputWide, nil, nil
	case OutputJSON:
		return outputJSON, nil, nil
	case OutputYAML:
		return outputYAML, nil, nil
	}
	output := string(f)
	format, _, _ := strings.Cut(output, "=")
	allowMissingKeys := true
	switch {
	case slices.Contains(genericclioptions.NewJSONPathPrintFlags("", true).AllowedFormats(), format):
		tp, err := (&genericclioptions.JSONPathPrintFlags{AllowMissingKeys: &allowMissingKeys}).ToPrinter(output)
		return outputTemplate, tp, err
	case slices.Contains(genericclioptions.NewGoTemplatePrintFlags().AllowedFormats(), format):
		f := genericclioptions.NewGoTemplatePrintFlags()
		f.AllowMissingKeys = &allowMissingKeys
		tp, err := f.ToPrinter(output)
		return outputTemplate, tp, err
	}
	return outputHuman, nil, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s",
		output, strings.Join(AllowedOutputs(), ","))
}

// recordMap is an event's JSON record as a map, numbers as int64 or float64 like an
// unstructured object's.
func (p *Printer) recordMap(ev *watch.Event) (map[string]any, error) {
	b, err := marshal(p.record(ev))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = utiljson.Unmarshal(b, &m)
	return m, err
}

// writeYAML writes the event's JSON record as one YAML document, keys in the record's order.
func (p *Printer) writeYAML(ev *watch.Event) error {
	b, err := marshal(p.record(ev))
	if err != nil {
		return err
	}
	text, err := jsonToYAML(b)
	if err != nil {
		return err
	}
	p.w.WriteString("---\n")
	_, err = p.w.WriteString(text)
	return err
}

// writeTemplate applies the -o jsonpath / go-template template to the event's JSON record.
// Control characters from the server come out escaped (tabs and newlines stay); every event's
// output ends with a newline.
func (p *Printer) writeTemplate(ev *watch.Event) error {
	m, err := p.recordMap(ev)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := p.tmpl.PrintObj(&unstructured.Unstructured{Object: m}, &buf); err != nil {
		p.templateFailures.Add(1)
		msg := fmt.Sprintf("%s event: %s", ev.Type, firstLine(err.Error()))
		if p.opts.ErrOut == nil {
			return errors.New(msg)
		}
		_, werr := fmt.Fprintln(p.opts.ErrOut, "error: "+Escape(msg))
		return werr
	}
	out := escapeKeepLayout(buf.String())
	if out == "" {
		return nil // a template that prints nothing for this event (e.g. a filter)
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	_, err = p.w.WriteString(out)
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

// escapeKeepLayout is Escape for multi-line text: tabs and newlines stay, every other control
// character is escaped.
func escapeKeepLayout(s string) string {
	if !needsEscape(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t")
		for j, c := range cells {
			cells[j] = Escape(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

// jsonToYAML converts one JSON value to a YAML document, keeping the order of object keys.
// Strings holding control characters come out double-quoted with escapes (the YAML library's
// for C0 and C1 controls, \uXXXX for the format characters it would leave raw, such as
// bidirectional overrides).
func jsonToYAML(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	node, err := yamlNode(dec)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	out := buf.String()
	if hasFormatChars(out) {
		// Only strings yamlString double-quoted hold them: escape them there.
		out = recording.EscapeFormatChars(out)
	}
	return out, nil
}

// yamlString is a string scalar; one holding a format character is double-quoted so that it
// can be escaped.
func yamlString(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if hasFormatChars(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func hasFormatChars(s string) bool {
	return strings.IndexFunc(s, recording.IsFormatChar) >= 0
}

func yamlNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := yamlNode(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, yamlString(k), v)
			}
			_, err := dec.Token() // }
			return n, err
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				v, err := yamlNode(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			_, err := dec.Token() // ]
			return n, err
		}
	case string:
		return yamlString(t), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}
