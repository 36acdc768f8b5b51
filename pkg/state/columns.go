package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// column is a CRD printer column, its JSONPath compiled.
type column struct {
	discovery.PrinterColumn
	path *jsonpath.JSONPath
}

// compileColumn compiles a printer column the way the API server's table convertor does
// (apiextensions-apiserver's tableconvertor: `{JSONPATH}`, missing keys allowed). Date columns
// are left out: `kubectl get` shows them as an age, which changes with the clock, not with the
// object.
func compileColumn(c discovery.PrinterColumn) (column, bool) {
	if c.Type == "date" {
		return column{}, false
	}
	p := jsonpath.New(c.Name)
	if err := p.Parse("{" + c.JSONPath + "}"); err != nil {
		return column{}, false
	}
	p.AllowMissingKeys(true)
	return column{PrinterColumn: c, path: p}, true
}

// columnFields evaluates the columns whose priority keep says, leaving out those without a value.
func (r *Reader) columnFields(obj *unstructured.Unstructured, keep func(int32) bool) []Field {
	var out []Field
	for _, c := range r.columns {
		if !keep(c.Priority) {
			continue
		}
		if v, ok := c.value(obj.Object); ok {
			out = append(out, Field{Name: c.Name, Value: v})
		}
	}
	return out
}

// value is the cell the API server's table convertor makes, as text: the first result of the
// JSONPath; strings printed as jsonpath prints them, integers, numbers and booleans only when
// the value has that type.
func (c column) value(obj map[string]any) (string, bool) {
	results, err := c.path.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return "", false
	}
	v := results[0][0].Interface()
	if v == nil {
		return "", false
	}
	switch c.Type {
	case "string":
		var buf bytes.Buffer
		if err := c.path.PrintResults(&buf, []reflect.Value{reflect.ValueOf(v)}); err != nil || buf.Len() == 0 {
			return "", false
		}
		return buf.String(), true
	case "integer":
		switch n := v.(type) {
		case int64:
			return strconv.FormatInt(n, 10), true
		case float64:
			return strconv.FormatInt(int64(n), 10), true
		case json.Number:
			if i, err := n.Int64(); err == nil {
				return strconv.FormatInt(i, 10), true
			}
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return strconv.FormatFloat(float64(n), 'f', -1, 64), true
		case float64:
			return strconv.FormatFloat(n, 'f', -1, 64), true
		case json.Number:
			return n.String(), true
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), true
		}
	default:
		return fmt.Sprint(v), true
	}
	return "", false
}
