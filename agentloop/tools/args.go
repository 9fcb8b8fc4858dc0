package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai/jsonschema"
)

// decodeArgs checks the model's arguments against schema and decodes them
// into v, a pointer to a struct whose json tags follow the schema. The
// returned error is written for the model: it names the argument at fault
// and the arguments the tool takes. Checking against the schema rather
// than relying on encoding/json alone lets the message say "missing
// required argument" and "unknown argument", which json.Unmarshal cannot.
func decodeArgs(raw json.RawMessage, schema *jsonschema.Definition, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); ok {
			return fmt.Errorf("the arguments must be a JSON object with the fields %s", fieldList(schema))
		}
		return fmt.Errorf("the arguments are not valid JSON (%v); send a JSON object with the fields %s", err, fieldList(schema))
	}
	var unknown []string
	for name := range fields {
		if _, ok := schema.Properties[name]; !ok {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		word := "argument"
		if len(unknown) > 1 {
			word = "arguments"
		}
		return fmt.Errorf("unknown %s %s; the arguments are %s", word, strings.Join(unknown, ", "), fieldList(schema))
	}
	for name, val := range fields {
		if string(bytes.TrimSpace(val)) == "null" {
			delete(fields, name) // null stands for "not given"
			continue
		}
		fixed, err := checkValue(name, schema.Properties[name], val)
		if err != nil {
			return err
		}
		fields[name] = fixed
	}
	for _, name := range schema.Required {
		if _, ok := fields[name]; !ok {
			return fmt.Errorf("missing required argument %q; the arguments are %s", name, fieldList(schema))
		}
	}
	clean, err := json.Marshal(fields)
	if err == nil {
		err = json.Unmarshal(clean, v)
	}
	if err != nil {
		return fmt.Errorf("cannot decode the arguments: %w", err)
	}
	return nil
}

// checkValue checks one argument against its schema and returns it,
// normalised: an integer written as 10.0 becomes 10.
func checkValue(name string, def jsonschema.Definition, val json.RawMessage) (json.RawMessage, error) {
	val = bytes.TrimSpace(val)
	got := jsonKind(val)
	switch def.Type {
	case jsonschema.Integer:
		if got != "number" {
			return nil, typeError(name, "an integer", got, val)
		}
		f, err := strconv.ParseFloat(string(val), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("argument %q must be an integer, not %s", name, val)
		}
		return json.RawMessage(strconv.FormatInt(int64(f), 10)), nil
	case jsonschema.Number:
		if got != "number" {
			return nil, typeError(name, "a number", got, val)
		}
	case jsonschema.String:
		if got != "string" {
			return nil, typeError(name, "a string", got, val)
		}
		if len(def.Enum) > 0 {
			var s string
			if err := json.Unmarshal(val, &s); err != nil || !slices.Contains(def.Enum, s) {
				return nil, fmt.Errorf("argument %q must be one of %s, not %s", name, strings.Join(def.Enum, ", "), val)
			}
		}
	case jsonschema.Boolean:
		if got != "boolean" {
			return nil, typeError(name, "true or false", got, val)
		}
	case jsonschema.Array:
		if got != "array" {
			return nil, typeError(name, "an array", got, val)
		}
		if def.Items != nil {
			var items []json.RawMessage
			if err := json.Unmarshal(val, &items); err != nil {
				return nil, fmt.Errorf("argument %q is not a valid array: %w", name, err)
			}
			for i, it := range items {
				fixed, err := checkValue(fmt.Sprintf("%s[%d]", name, i), *def.Items, it)
				if err != nil {
					return nil, err
				}
				items[i] = fixed
			}
			return json.Marshal(items)
		}
	case jsonschema.Object:
		if got != "object" {
			return nil, typeError(name, "an object", got, val)
		}
	}
	return val, nil
}

func typeError(name, want, got string, val json.RawMessage) error {
	shown := string(val)
	if len(shown) > 40 {
		shown = shown[:37] + "..."
	}
	return fmt.Errorf("argument %q must be %s, not %s (%s)", name, want, article(got), shown)
}

func article(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "null":
		return kind
	}
	return "a " + kind
}

// jsonKind names the JSON type of a valid JSON value by its first byte.
func jsonKind(val json.RawMessage) string {
	if len(val) == 0 {
		return "nothing"
	}
	switch val[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// fieldList describes a schema's fields for an error message, required
// ones marked: "path (required), offset, limit".
func fieldList(schema *jsonschema.Definition) string {
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(schema.Required, a), slices.Contains(schema.Required, b)
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for i, n := range names {
		if slices.Contains(schema.Required, n) {
			names[i] = n + " (required)"
		}
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
