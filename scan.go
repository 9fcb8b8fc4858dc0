package mira

import (
	"fmt"
	"maps"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/mem"
)

// scanEntry runs the secret scan over every field of e that reaches a file,
// a commit message or a prompt: the text (findings without a Field), the
// front matter fields Mira knows, each tag, and the extra fields, names and
// values at any depth, encoded as the file will hold them, so that a value
// of any type is seen as written. It returns the findings in that order.
func scanEntry(e *mem.Entry) []secret.Finding {
	var out []secret.Finding
	scan := func(field, text string) int {
		if text == "" {
			return 0
		}
		fs := secret.Scan(text)
		for _, f := range fs {
			f.Field = field
			out = append(out, f)
		}
		return len(fs)
	}
	scan("", e.Body)
	for _, f := range []struct{ name, value string }{
		{"id", e.ID}, {"kind", e.Kind}, {"scope", e.Scope}, {"project", e.Project}, {"source", e.Source},
		{"role", e.Role}, {"status", e.Status}, {"priority", e.Priority}, {"pin", e.Pin}, {"level", e.Level},
	} {
		scan(f.name, f.value)
	}
	for i, t := range e.Tags {
		scan(fmt.Sprintf("tags[%d]", i), t)
	}
	scan("replaced_by", e.ReplacedBy)
	scan("deleted_reason", e.DeletedReason)
	for _, k := range slices.Sorted(maps.Keys(e.Extra)) {
		if scan("field name", k) > 0 {
			continue // the path to its value would show the secret
		}
		var n yaml.Node
		if err := n.Encode(e.Extra[k]); err != nil {
			continue // not encodable, so never written: the write fails
		}
		scanNode(k, &n, scan)
	}
	return out
}

// scanNode scans the scalars of an encoded value, each under its path
// (meta.env.KEY, refs[2]), and the names in its mappings.
func scanNode(path string, n *yaml.Node, scan func(field, text string) int) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			scanNode(path, c, scan)
		}
	case yaml.ScalarNode:
		scan(path, n.Value)
	case yaml.SequenceNode:
		for i, c := range n.Content {
			scanNode(fmt.Sprintf("%s[%d]", path, i), c, scan)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				scanNode(path+": field name", k, scan)
				scanNode(path, v, scan)
				continue
			}
			if scan(path+": field name", k.Value) > 0 {
				continue
			}
			scanNode(path+"."+k.Value, v, scan)
		}
	}
}

// CheckSecret refuses an entry with what looks like a credential in any
// field that reaches a file, a commit message or a prompt (see scanEntry),
// as Remember does: the error is an *InvalidError holding a *SecretError.
// A front end reading many records calls it on each to name the record
// at fault.
func CheckSecret(e *mem.Entry) error {
	if f := scanEntry(e); len(f) > 0 {
		return &InvalidError{Err: &SecretError{Findings: f}}
	}
	return nil
}
