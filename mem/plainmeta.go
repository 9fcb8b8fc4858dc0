package mem

import (
	"sync"
	"time"
	"unsafe"

	"go.yaml.in/yaml/v3"
)

// plainMeta reads the front matter Mira writes itself without the YAML
// parser: one "key: value" per line, each value a plain word (an id, a
// kind, a scope), an RFC 3339 time in UTC or a flow list of plain words
// ("tags: [a, b]"). It returns the mapping node yaml.v3 makes of the same
// bytes, positions and tags included (FuzzPlainMeta holds it to that),
// and false for anything else: quotes, comments, blank lines, other
// punctuation, numbers, a repeated key. Those go to the parser.
//
// Reading a file's meta is most of the cost of reading a memory: at
// 100,000 entries a rebuild spent 2.7 s of CPU in yaml.v3, against a
// fraction of that here.
func plainMeta(yml []byte) (*yaml.Node, bool) {
	return plainMetaIn(yml, nil)
}

// metaRoom is room a bulk reader lends plainMeta for the nodes of one file
// after another (see Store.ReadStatUse): the nodes were half of what a
// rebuild allocated, 3 KB a file.
type metaRoom struct {
	slab    []yaml.Node
	content []*yaml.Node
}

var metaRooms = sync.Pool{New: func() any { return new(metaRoom) }}

// plainMetaIn is plainMeta making its nodes in room, when not nil; they
// are then valid until room is lent again.
func plainMetaIn(yml []byte, room *metaRoom) (*yaml.Node, bool) {
	if len(yml) == 0 {
		return nil, false
	}
	// The nodes come from one slab and the strings from one copy of the
	// front matter: a node and a string per key and per value had been
	// most of the cost of reading a memory (BenchmarkParseMeta).
	lines := 1
	for _, c := range yml {
		if c == '\n' {
			lines++
		}
	}
	var own metaRoom // without a room, the nodes are the caller's to keep
	if room == nil {
		room = &own
	}
	if cap(room.slab) < 2*lines+4 {
		room.slab = make([]yaml.Node, 0, 2*lines+4)
	}
	if cap(room.content) < 2*lines {
		room.content = make([]*yaml.Node, 0, 2*lines)
	}
	p := plainParser{yml: yml, text: string(yml), slab: room.slab[:0]}
	m := p.node(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1})
	m.Content = room.content[:0]
	line := 0
	for len(yml) > 0 {
		line++
		var l []byte
		l, yml = cutPlainLine(yml)
		if l == nil {
			return nil, false
		}
		colon := 0
		for colon < len(l) && isKeyByte(l[colon], colon == 0) {
			colon++
		}
		// (YAML allows a key of at most 1024 characters; Mira's are short.)
		if colon == 0 || colon > 64 || colon+1 >= len(l) || l[colon] != ':' || l[colon+1] != ' ' {
			return nil, false
		}
		key := p.str(l[:colon])
		if reserved(key) {
			return nil, false
		}
		for i := 0; i < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return nil, false // the parser's error names the line
			}
		}
		at := colon + 2
		for at < len(l) && l[at] == ' ' {
			at++
		}
		if at == len(l) {
			return nil, false
		}
		var v *yaml.Node
		if l[at] == '[' {
			v = p.list(l, at, line)
		} else {
			v = p.scalar(l[at:], line, at+1, false)
		}
		if v == nil {
			return nil, false
		}
		m.Content = append(m.Content, p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line, Column: 1}), v)
	}
	return m, true
}

// plainParser is what plainMeta reads a front matter with.
type plainParser struct {
	yml  []byte
	text string      // yml as a string, which the nodes' strings are cut from
	slab []yaml.Node // room for the nodes, never grown
}

// node returns a node holding n, from the slab while it has room.
func (p *plainParser) node(n yaml.Node) *yaml.Node {
	if len(p.slab) == cap(p.slab) {
		q := new(yaml.Node)
		*q = n
		return q
	}
	p.slab = append(p.slab, n)
	return &p.slab[len(p.slab)-1]
}

// str returns b, a part of p.yml, as the same part of p.text.
func (p *plainParser) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	at := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(p.yml))))
	return p.text[at : at+len(b)]
}

// cutPlainLine returns the first line of b and the rest; a nil line when
// it is empty or ends in a carriage return or a space.
func cutPlainLine(b []byte) (line, rest []byte) {
	i := 0
	for i < len(b) && b[i] != '\n' {
		i++
	}
	line, rest = b[:i], b[min(i+1, len(b)):]
	if len(line) == 0 || line[len(line)-1] == '\r' || line[len(line)-1] == ' ' {
		return nil, nil
	}
	return line, rest
}

// isKeyByte reports whether c may be in a field name: lower-case letters
// and underscores, digits after the first.
func isKeyByte(c byte, first bool) bool {
	return c >= 'a' && c <= 'z' || c == '_' || !first && c >= '0' && c <= '9'
}

// reserved reports the words YAML reads as something other than a string.
func reserved(s string) bool {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return true
	}
	return false
}

// scalar returns the node of the plain scalar s (the rest of a line,
// or an item of a flow list when inList), or nil when it is not one of
// the few kinds plainMeta reads.
func (p *plainParser) scalar(s []byte, line, col int, inList bool) *yaml.Node {
	if len(s) == 0 {
		return nil
	}
	letter := s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z'
	if !letter {
		if s[0] < '0' || s[0] > '9' {
			return nil
		}
		// A date or a time: YAML reads a value that starts with four
		// digits and a dash as one when it can.
		if len(s) > 4 && s[4] == '-' && isDigits(s[:4]) {
			if !inList && isUTCTime(s) {
				return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: p.str(s), Line: line, Column: col})
			}
			return nil
		}
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			return nil
		}
		// A letter no number has (hex digits, exponents and the 0x,
		// 0o, 0b prefixes aside) makes a value that starts with a
		// digit a string, as an id does: 01KDVDNA00NFRJBHA1T8EQY3E8.
		letter = letter || c >= 'g' && c <= 'z' && c != 'o' && c != 'x' || c >= 'G' && c <= 'Z' && c != 'O' && c != 'X'
	}
	v := p.str(s)
	if !letter || reserved(v) {
		return nil
	}
	return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: line, Column: col})
}

// isDigits reports whether s is all ASCII digits.
func isDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// list returns the node of the flow list that starts at l[at] and
// ends the line: "[a, b]", items separated by a comma and one space, or
// nil.
func (p *plainParser) list(l []byte, at, line int) *yaml.Node {
	if l[len(l)-1] != ']' {
		return nil
	}
	n := p.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line, Column: at + 1})
	inner := l[at+1 : len(l)-1]
	if len(inner) == 0 {
		return n
	}
	col := at + 2
	for {
		end := 0
		for end < len(inner) && inner[end] != ',' {
			end++
		}
		item := p.scalar(inner[:end], line, col, true)
		if item == nil {
			return nil
		}
		n.Content = append(n.Content, item)
		if end == len(inner) {
			return n
		}
		if end+2 >= len(inner) || inner[end+1] != ' ' {
			return nil
		}
		inner = inner[end+2:]
		col += end + 2
	}
}

// isUTCTime reports whether s is a time as Mira writes it:
// 2026-01-02T15:04:05Z, with or without a fraction of a second.
func isUTCTime(s []byte) bool {
	const layout = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(layout)+1 || s[len(s)-1] != 'Z' {
		return false
	}
	for i := 0; i < len(layout); i++ {
		if layout[i] == 'd' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != layout[i] {
			return false
		}
	}
	if frac := s[len(layout) : len(s)-1]; len(frac) > 0 {
		if len(frac) < 2 || frac[0] != '.' {
			return false
		}
		for _, c := range frac[1:] {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	_, err := time.Parse(time.RFC3339Nano, string(s))
	return err == nil
}
