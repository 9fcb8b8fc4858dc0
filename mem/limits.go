package mem

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on what an entry may hold besides its text. Each field that
// reaches a file is bounded, and so is the file: every recall reads the
// entries it returns and every index update the files that changed, so one
// entry with a 3 MB tag or 60,000 tags had made each recall take seconds
// and hundreds of megabytes. The text is bounded by the caller
// (remember.max_bytes); a file made by hand is bounded by MaxFileBytes.
// The same limits hold when a file is written and when it is read: a file
// Mira writes is always one it can read back.
const (
	// MaxTags is the most tags an entry may have.
	MaxTags = 64
	// MaxTagBytes is the longest tag.
	MaxTagBytes = 128
	// MaxFieldBytes is the longest value of a one-word field: kind,
	// project, source, role, status, priority, pin, level, replaced_by;
	// a scope is shorter still (MaxScopeBytes). (An id is at most 64
	// bytes, see ValidID.)
	MaxFieldBytes = 256
	// MaxScopeBytes is the longest scope: a scope is also a directory
	// name, so it is shorter than the other one-word fields.
	MaxScopeBytes = 128
	// MaxReasonBytes is the longest deleted_reason.
	MaxReasonBytes = 4 << 10
	// MaxExtraBytes bounds the other fields of the front matter together
	// (their names and values, as their text). The agent and the proxy
	// keep a turn's tool calls, arguments included, and a model's
	// reasoning there, and a summary the ids it covers: a megabyte is
	// more than a model writes in one reply.
	MaxExtraBytes = 1 << 20
	// MaxDepth is how deeply a field's value may nest lists and
	// mappings: a value nested 10,000 levels deep passes the YAML and the
	// JSON parsers alone, but not a record that wraps it.
	MaxDepth = 32
	// MaxMetaBytes bounds the front matter as written in the file: the
	// fields above, and room for YAML to quote and escape them.
	MaxMetaBytes = 4 << 20
	// MaxFileBytes bounds an entry file. A larger file, made by hand, is
	// reported and skipped, not read.
	MaxFileBytes = 16 << 20
)

// LimitError is a field, or a file, beyond one of the limits above.
type LimitError struct {
	Field string // "tags", "tags[3]", "project", a field of Extra, "front matter", "file"
	What  string // what it holds: "70 tags", "3.0 MiB", "nested 40 levels deep"
	Limit string // the limit in the same terms: "64", "128 bytes", "32 levels"
}

func (e *LimitError) Error() string {
	field := e.Field
	if field != "front matter" && field != "file" {
		field = "field " + quoteField(field)
	}
	return fmt.Sprintf("%s: %s, more than the limit of %s", field, e.What, e.Limit)
}

// quoteField quotes a field name for a message, its control characters
// escaped.
func quoteField(s string) string { return fmt.Sprintf("%q", s) }

// ByteSize says a size in bytes the way people read it.
func ByteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func tooLong(field string, n, limit int) *LimitError {
	return &LimitError{Field: field, What: ByteSize(n), Limit: ByteSize(limit)}
}

// CheckLimits reports the first field of e beyond its limit: the tags,
// the one-word fields, deleted_reason, and the fields of Extra (their size
// and nesting). The text is not checked here.
func CheckLimits(e *Entry) error {
	if len(e.ID) > 64 {
		return tooLong("id", len(e.ID), 64)
	}
	for _, f := range []struct {
		name, v string
	}{
		{"kind", e.Kind}, {"scope", e.Scope}, {"project", e.Project}, {"source", e.Source}, {"role", e.Role},
		{"status", e.Status}, {"priority", e.Priority}, {"pin", e.Pin}, {"pin_task", e.PinTask}, {"level", e.Level}, {"replaced_by", e.ReplacedBy},
	} {
		if len(f.v) > MaxFieldBytes {
			return tooLong(f.name, len(f.v), MaxFieldBytes)
		}
	}
	if len(e.DeletedReason) > MaxReasonBytes {
		return tooLong("deleted_reason", len(e.DeletedReason), MaxReasonBytes)
	}
	if err := checkTags(e.Tags); err != nil {
		return err
	}
	size := 0
	for _, k := range sortedKeys(e.Extra) {
		size += len(k)
		if depth := measure(e.Extra[k], 1, &size); depth > MaxDepth {
			return &LimitError{Field: k, What: "nested more deeply", Limit: fmt.Sprint(MaxDepth, " levels")}
		}
		if size > MaxExtraBytes {
			return &LimitError{Field: k, What: "the fields beyond the known ones reach " + ByteSize(size) + " with it", Limit: ByteSize(MaxExtraBytes) + " for all of them"}
		}
	}
	return nil
}

// checkTags checks the number and the length of tags.
func checkTags(tags []string) error {
	if len(tags) > MaxTags {
		return &LimitError{Field: "tags", What: fmt.Sprint(len(tags), " tags"), Limit: fmt.Sprint(MaxTags, " tags")}
	}
	for i, t := range tags {
		if len(t) > MaxTagBytes {
			return tooLong(fmt.Sprintf("tags[%d]", i), len(t), MaxTagBytes)
		}
	}
	return nil
}

// measure adds the size of v, a value of Extra, to *n (the bytes of its
// strings and names, a few for any other value) and returns how deeply it
// nests, counting from depth. It stops once *n passes MaxExtraBytes or
// the depth MaxDepth, so that a huge or deep value costs no more than the
// limit to refuse.
func measure(v any, depth int, n *int) int {
	if depth > MaxDepth || *n > MaxExtraBytes {
		return depth
	}
	deepest := depth
	switch x := v.(type) {
	case string:
		*n += len(x)
	case []byte:
		*n += len(x)
	case map[string]any:
		for k, c := range x {
			*n += len(k)
			if deepest = max(deepest, measure(c, depth+1, n)); deepest > MaxDepth || *n > MaxExtraBytes {
				break
			}
		}
	case []any:
		for _, c := range x {
			*n++
			if deepest = max(deepest, measure(c, depth+1, n)); deepest > MaxDepth || *n > MaxExtraBytes {
				break
			}
		}
	case []string:
		for _, c := range x {
			*n += len(c) + 1
		}
		deepest = depth + 1
	case nil, bool, int, int64, float64, time.Time:
		*n += 8
	default:
		// Any other Go value is measured as YAML writes it.
		var node yaml.Node
		if err := node.Encode(v); err != nil {
			return depth // never written: the write fails on it
		}
		size, d := nodeSize(&node, depth)
		*n += size
		deepest = d
	}
	return deepest
}

// nodeSize is the bytes of the scalars of a YAML node and how deeply it
// nests, counting from depth; aliases are followed.
func nodeSize(n *yaml.Node, depth int) (size, maxDepth int) {
	seen := 0
	var walk func(n *yaml.Node, d int)
	walk = func(n *yaml.Node, d int) {
		seen++
		if d > maxDepth {
			maxDepth = d
		}
		if d > MaxDepth || seen > 1<<16 {
			return
		}
		switch n.Kind {
		case yaml.ScalarNode:
			size += len(n.Value)
		case yaml.AliasNode:
			if n.Alias != nil {
				walk(n.Alias, d)
			}
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, d)
			}
		default:
			for _, c := range n.Content {
				walk(c, d+1)
			}
		}
	}
	walk(n, depth)
	if seen > 1<<16 {
		maxDepth = max(maxDepth, MaxDepth+1) // aliases that multiply: refused as too deep
	}
	return size, maxDepth
}

// checkMetaDepth reports a field of the front matter m whose value nests
// more than MaxDepth levels.
func checkMetaDepth(m *yaml.Node) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if _, d := nodeSize(m.Content[i+1], 1); d > MaxDepth {
			return fmt.Errorf("line %d: %w", m.Content[i].Line+1, &LimitError{Field: m.Content[i].Value, What: "nested more deeply", Limit: fmt.Sprint(MaxDepth, " levels")})
		}
	}
	return nil
}

// JSONDepth returns how deeply a value decoded by encoding/json nests
// lists and objects (1 for a scalar), counting no further than
// MaxDepth+1.
func JSONDepth(v any) int {
	var walk func(v any, d int) int
	walk = func(v any, d int) int {
		if d > MaxDepth {
			return d
		}
		deepest := d
		switch x := v.(type) {
		case map[string]any:
			for _, c := range x {
				deepest = max(deepest, walk(c, d+1))
			}
		case []any:
			for _, c := range x {
				deepest = max(deepest, walk(c, d+1))
			}
		}
		return deepest
	}
	return walk(v, 1)
}

// Escape returns s with its control characters (other than a tab and, when
// keepNewlines, a line feed) and invalid UTF-8 written as Go escapes, so
// that a value printed for a person cannot move the cursor, change colours
// or start a line of its own.
func Escape(s string, keepNewlines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) && r != '\t' && !(keepNewlines && r == '\n') || r == '\u2028' || r == '\u2029' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || keepNewlines && r == '\n':
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
