package mira

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/internal/openaicompat"
	"github.com/miramem/mira/internal/text"
	"go.yaml.in/yaml/v3"
)

// ConfigError is a mistake in the configuration file, at a line and key
// of it, told in the file's own terms: the key as written there, the
// value as the user typed it.
type ConfigError struct {
	Path string // the file; "" when the YAML came from elsewhere
	Line int    // 1-based; 0 when unknown
	Err  error
}

func (e *ConfigError) Error() string {
	where := "config"
	if e.Path != "" {
		where += " " + e.Path
	}
	if e.Line > 0 {
		if e.Path != "" {
			where += ":" + strconv.Itoa(e.Line)
		} else {
			where += " line " + strconv.Itoa(e.Line)
		}
	}
	return where + ": " + e.Err.Error()
}

func (e *ConfigError) Unwrap() error { return e.Err }

func oneOf(vals ...string) func(string) error {
	return func(v string) error {
		if slices.Contains(vals, v) {
			return nil
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(vals, ", "))
	}
}

func nonNegative(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		return fmt.Errorf("%s is not a whole number of at least 0 (the default)", v)
	}
	return nil
}

func positiveDuration(v string) error {
	if d, err := time.ParseDuration(v); err != nil || d <= 0 {
		return fmt.Errorf("%q is not a duration (such as 10s or 2m)", v)
	}
	return nil
}

func baseURL(v string) error {
	if v == "" {
		return nil
	}
	if err := openaicompat.CheckBaseURL(v); err != nil {
		return fmt.Errorf("%q is not an http(s)://host[:port]/path URL", v)
	}
	return nil
}

// recallSettings are the ranking's settings that CheckRecallSetting knows.
var recallSettings = []string{"recency_weight", "recency_days", "mmr_lambda", "min_score"}

// CheckRecallSetting reports a ranking setting out of range, by its name
// in the configuration's recall section: recency_weight in [0, 1],
// recency_days above 0, mmr_lambda in (0, 1], min_score at least 0.
func CheckRecallSetting(name string, v float64) error {
	ok := false
	want := ""
	switch name {
	case "recency_weight":
		ok, want = v >= 0 && v <= 1, "between 0 and 1"
	case "recency_days":
		ok, want = v > 0 && !math.IsInf(v, 1), "a positive number of days"
	case "mmr_lambda":
		ok, want = v > 0 && v <= 1, "greater than 0 and at most 1 (1 turns MMR off)"
	case "min_score":
		ok, want = v >= 0 && !math.IsInf(v, 1), "at least 0"
	default:
		return fmt.Errorf("unknown recall setting %q", name)
	}
	if !ok {
		return &settingError{name, fmt.Errorf("must be %s, not %v", want, v)}
	}
	return nil
}

// settingError is a setting out of range: its name, then what is wrong.
type settingError struct {
	name string
	err  error
}

func (e *settingError) Error() string { return e.name + " " + e.err.Error() }
func (e *settingError) Unwrap() error { return e.err }

// checkYAML walks the YAML document against type t and reports the
// first key that t does not have or value that does not decode into its
// field, by line; a value that decodes is then given to checkValue, which
// may refuse it with a message that names the key. It records the line
// of every key it meets in lines, by its dotted path ("recall.k").
func checkYAML(doc *yaml.Node, t reflect.Type, checkValue func(key string, n *yaml.Node) error, lines map[string]int) error {
	if doc.Kind == 0 {
		return nil // an empty file, or only comments
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		doc = doc.Content[0]
	}
	w := yamlWalk{checkValue: checkValue, lines: lines}
	return w.node(doc, t, "", doc.Line)
}

// yamlWalk is one walk of checkYAML.
type yamlWalk struct {
	checkValue func(key string, n *yaml.Node) error
	lines      map[string]int
}

func (w yamlWalk) node(n *yaml.Node, t reflect.Type, path string, line int) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	at := func(format string, args ...any) error {
		prefix := ""
		if path != "" {
			prefix = path + ": "
		}
		return &ConfigError{Line: line, Err: fmt.Errorf(prefix+format, args...)}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // an empty value keeps the default
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			return at("want keys and values, not %s", nodeKind(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := join(path, k.Value)
			if k.Value == "<<" { // a merge key: its mapping's keys are this one's
				if err := w.node(v, t, path, k.Line); err != nil {
					return err
				}
				continue
			}
			var ft reflect.Type
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else if f, ok := yamlField(t, k.Value); ok {
				ft = f.Type
			} else {
				msg := fmt.Sprintf("unknown key %q", key)
				if s := closest(k.Value, yamlKeys(t)); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", join(path, s))
				}
				return &ConfigError{Line: k.Line, Err: fmt.Errorf("%s", msg)}
			}
			w.lines[key] = k.Line
			if err := w.node(v, ft, key, k.Line); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return at("want a list, such as [a, b], not %s", nodeKind(n))
		}
		for _, e := range n.Content {
			if err := w.node(e, t.Elem(), path, e.Line); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return at("want a single value, not %s", nodeKind(n))
	}
	switch t.Kind() {
	case reflect.Int:
		var v int
		if n.Decode(&v) != nil {
			return at("%q is not a number", n.Value)
		}
	case reflect.Float64:
		var v float64
		if n.Decode(&v) != nil {
			return at("%q is not a number", n.Value)
		}
	case reflect.Bool:
		var v bool
		if n.Decode(&v) != nil {
			return at("%q is not true or false", n.Value)
		}
	}
	if err := w.checkValue(path, n); err != nil {
		return &ConfigError{Line: line, Err: err}
	}
	return nil
}

// nodeKind names what a YAML node is, for an error.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "keys and values"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlField returns t's field that the YAML key name sets.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlKeys lists the YAML keys of struct type t.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// closest returns the key of keys that s is most likely a misspelling of
// (at most two edits away, or one for short keys), or "".
func closest(s string, keys []string) string {
	best, bestD := "", 3
	if len(s) <= 3 {
		bestD = 2
	}
	for _, k := range keys {
		if d := text.Distance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// yamlValue returns the value at key (a dotted path of YAML keys such
// as "recall.k") in v, a struct, formatted as a YAML file would write
// it; ok is false when v has no such key. A nil pointer or a missing map
// entry on the way is an empty value.
func yamlValue(v reflect.Value, key string) (val string, ok bool) {
	for _, part := range strings.Split(key, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return "", true
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			f, ok := yamlField(v.Type(), part)
			if !ok {
				return "", false
			}
			v = v.FieldByIndex(f.Index)
		case reflect.Map:
			v = v.MapIndex(reflect.ValueOf(part))
			if !v.IsValid() {
				return "", true
			}
		default:
			return "", false
		}
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", true
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return "[" + strings.Join(parts, ", ") + "]", true
	}
	return fmt.Sprint(v.Interface()), true
}
