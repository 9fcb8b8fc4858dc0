package mem

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The front matter is kept as a yaml.Node mapping rather than decoded into a
// struct so that a rewrite keeps fields this version does not know, in their
// original order, with their original styles and comments. github.com/adrg/frontmatter
// was measured and rejected for this: it decodes through yaml.v2 into Go
// values (losing order and turning `no` into false) and cannot write back.

// ErrNoFrontMatter is returned for a file that does not start with a "---" line.
var ErrNoFrontMatter = errors.New("no front matter: file must start with a line \"---\"")

// splitFrontMatter splits data into the YAML between the first two "---"
// lines and the body after them. It reports the line of the closing
// delimiter (1-based) so parse errors can point into the file.
func splitFrontMatter(data []byte) (yml, body []byte, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, _ := cutLine(data)
	if strings.TrimRight(string(first), " \t\r") != "---" {
		return nil, nil, ErrNoFrontMatter
	}
	start := rest
	off := 0
	for {
		line, next, more := cutLine(rest)
		trimmed := strings.TrimRight(string(line), " \t\r")
		if trimmed == "---" || trimmed == "..." {
			yml = start[:off]
			body = next
			return yml, body, nil
		}
		if !more {
			return nil, nil, errors.New("front matter is not closed: no second \"---\" line")
		}
		off += len(line) + 1
		if off > MaxMetaBytes {
			// Not read further: no second "---" line comes soon enough.
			return nil, nil, fmt.Errorf("front matter: no closing \"---\" line within %s, the limit of a front matter", ByteSize(MaxMetaBytes))
		}
		rest = next
	}
}

// cutLine returns the first line of b without its newline, the rest, and
// whether a newline was found.
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

// parseMeta decodes the YAML front matter into a mapping node: the
// front matter Mira writes itself without the YAML parser (plainMeta),
// anything else with it.
func parseMeta(yml []byte, room *metaRoom) (*yaml.Node, error) {
	if m, ok := plainMetaIn(yml, room); ok {
		return m, nil
	}
	m, err := yamlMeta(yml)
	if err != nil {
		return nil, err
	}
	// yaml.v3 reads values nested up to 10,000 levels deep; a record
	// that wraps one is refused by encoding/json as too deep.
	if err := checkMetaDepth(m); err != nil {
		return nil, err
	}
	return m, nil
}

// yamlMeta decodes the YAML front matter into a mapping node with the
// YAML parser.
func yamlMeta(yml []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		// yaml.v3 reports "yaml: line N: ..."; the front matter starts on
		// line 2 of the file, so shift the number for the user.
		return nil, fmt.Errorf("invalid YAML: %s", shiftYAMLLine(err.Error(), 1))
	}
	if doc.Kind == 0 { // empty front matter
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("front matter must be a YAML mapping of fields")
	}
	m := doc.Content[0]
	seen := map[string]bool{}
	// A mapping's content is key, value, key, value, ...
	for i := 0; i < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: field name must be a plain string", k.Line+1)
		}
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: field %q appears twice", k.Line+1, k.Value)
		}
		seen[k.Value] = true
	}
	return m, nil
}

// shiftYAMLLine rewrites "line N" in a yaml.v3 error message to N+by.
func shiftYAMLLine(msg string, by int) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	var n int
	var rest string
	if _, err := fmt.Sscanf(msg, "line %d:", &n); err == nil {
		if i := strings.Index(msg, ":"); i >= 0 {
			rest = msg[i:]
		}
		return fmt.Sprintf("line %d%s", n+by, rest)
	}
	return msg
}

// metaGet returns the value node of key in mapping m, or nil.
func metaGet(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// metaSet replaces the value of key in m, keeping its position, or appends
// the key at the end. A nil value removes the key.
func metaSet(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if v == nil {
				m.Content = append(m.Content[:i], m.Content[i+2:]...)
				return
			}
			// Keep comments attached to the old value.
			v.HeadComment, v.LineComment, v.FootComment = m.Content[i+1].HeadComment, m.Content[i+1].LineComment, m.Content[i+1].FootComment
			m.Content[i+1] = v
			return
		}
	}
	if v == nil {
		return
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// strNode makes a scalar string node. Strings that YAML would read as
// something else (true, 2026-01-01, 12) are quoted by the encoder because the
// tag is !!str.
func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// listNode makes a flow-style sequence of strings: tags: [a, b].
func listNode(items []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, s := range items {
		n.Content = append(n.Content, strNode(s))
	}
	return n
}

// scalarString returns a scalar node's value, or an error naming the field.
func scalarString(m *yaml.Node, key string) (string, error) {
	v := metaGet(m, key)
	if v == nil {
		return "", nil
	}
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: field %q must be a single value", v.Line+1, key)
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return v.Value, nil
}

// stringList returns a sequence (or a single scalar) as a list of strings.
func stringList(m *yaml.Node, key string) ([]string, error) {
	v := metaGet(m, key)
	if v == nil {
		return nil, nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" || v.Value == "" {
			return nil, nil
		}
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: field %q must be a list of strings", c.Line+1, key)
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: field %q must be a list of strings", v.Line+1, key)
}

// encodeMeta writes the mapping as YAML with two-space indentation.
func encodeMeta(m *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
