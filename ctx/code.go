package ctx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/miramem/mira/mem"
)

// CodeKinds are the kinds of a code symbol: a record of one of these kinds
// that names a path is a code card, not a memory. "file" is a file found
// without a symbol in it.
var CodeKinds = []string{"func", "method", "class", "struct", "interface", "type", "enum", "trait", "impl",
	"const", "var", "field", "module", "macro", "file"}

// KindMap is the kind of the code map item.
const KindMap = "map"

// Code is a code candidate: a symbol card as the code index gives it (and
// mira-code prints it), with what a touchpoint adds to it.
type Code struct {
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	Parent    string `json:"parent,omitempty"`
	Module    string `json:"module,omitempty"`
	Path      string `json:"path"`
	Lang      string `json:"lang,omitempty"`
	Line      int    `json:"line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	Signature string `json:"signature,omitempty"`
	Doc       string `json:"doc,omitempty"`
	// Snippet is the beginning of the definition, or its whole body.
	Snippet string `json:"snippet,omitempty"`
	// Excerpt is the window of source around what matched the query.
	Excerpt string `json:"excerpt,omitempty"`
	// Why says why it was retrieved.
	Why []string `json:"why,omitempty"`
	// Memories name the memories that point at it.
	Memories []string `json:"memories,omitempty"`
}

// Ref is how the card is named in a plan and in the code tools:
// "path:line", or the path alone.
func (c *Code) Ref() string {
	if c.Line > 0 {
		return c.Path + ":" + strconv.Itoa(c.Line)
	}
	return c.Path
}

// FromCode makes an item of a code card with its score (nil: none). Its
// id is the card's Ref, so that the same symbol from two sources is one
// candidate.
func FromCode(c Code, score *float64) Item {
	c.Why = slices.Clone(c.Why)
	c.Memories = slices.Clone(c.Memories)
	return Item{
		Record:  mem.Record{ID: c.Ref(), Kind: c.Kind, Score: score},
		Section: SectionCode,
		Code:    &c,
	}
}

// CodeMap makes the item of the code map: the module tree and central
// symbols as the code index drew it. It is included whole or not at all.
// Its id hashes the text, so that the same map gives the same plan.
func CodeMap(text string) Item {
	sum := sha256.Sum256([]byte(text))
	return Item{
		Record:  mem.Record{ID: "map-" + hex.EncodeToString(sum[:6]), Kind: KindMap, Text: text},
		Section: SectionCodeMap,
	}
}

// ParseCode reads one JSON record as a code candidate, in the form
// mira-code prints: a card or touchpoint (a "kind" of CodeKinds and a
// "path"), a file (a "path", no "kind" and no "text"), or a map (a "text"
// with "tokens" or "modules", no "kind" and no "path"). ok is false for
// any other record, which is then a memory; err says what is wrong with a
// code record.
func ParseCode(line []byte) (it Item, ok bool, err error) {
	var probe struct {
		Kind    string          `json:"kind"`
		Path    *string         `json:"path"`
		Text    *string         `json:"text"`
		Modules json.RawMessage `json:"modules"`
		Tokens  json.RawMessage `json:"tokens"`
		Score   *float64        `json:"score"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return Item{}, false, nil
	}
	if probe.Kind == "" && probe.Path == nil && probe.Text != nil && (probe.Modules != nil || probe.Tokens != nil) {
		if strings.TrimSpace(*probe.Text) == "" {
			return Item{}, true, fmt.Errorf(`code map has no "text"`)
		}
		return CodeMap(*probe.Text), true, nil
	}
	file := probe.Kind == "" && probe.Path != nil && probe.Text == nil
	if probe.Path == nil || !file && !slices.Contains(CodeKinds, probe.Kind) {
		return Item{}, false, nil
	}
	var c Code
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&c); err != nil {
		return Item{}, true, fmt.Errorf("code card: %w", err)
	}
	if file {
		c.Kind = "file"
	}
	switch {
	case strings.TrimSpace(c.Path) == "":
		return Item{}, true, fmt.Errorf(`code card has an empty "path"`)
	case c.Line < 0 || c.EndLine < 0:
		return Item{}, true, fmt.Errorf(`code card %s: negative "line" or "end_line"`, c.Path)
	}
	return FromCode(c, probe.Score), true, nil
}

// codeText is what a code card shows, the excerpt cut to lines (0: no
// excerpt): the signature, the doc (its first docLines lines, 0: all),
// then the excerpt or the snippet. cut says the doc or the excerpt was
// shortened, and how.
func codeText(c *Code, docLines, lines int) (text, note string) {
	var parts []string
	if s := cleanText(c.Signature); s != "" {
		parts = append(parts, s)
	}
	var notes []string
	if d := cleanText(c.Doc); d != "" {
		if docLines > 0 {
			if shown, cut := card(d, docLines); cut {
				d = shown
				notes = append(notes, "doc: "+thousands(strings.Count(shown, "\n")+1)+" lines shown")
			}
		}
		parts = append(parts, d)
	}
	if lines > 0 {
		body := cleanText(cmpOr(c.Excerpt, c.Snippet))
		if body != "" {
			all := strings.Split(body, "\n")
			if len(all) > lines {
				notes = append(notes, fmt.Sprintf("excerpt: %s of %s lines", thousands(lines), thousands(len(all))))
				all = all[:lines]
			}
			parts = append(parts, strings.Join(all, "\n"))
		}
	}
	if len(parts) == 0 {
		// A file hit, or a card with nothing but its place: the header
		// says it all, and the block still needs a line of its own.
		parts = append(parts, cleanText(cmpOr(c.Name, c.Path)))
	}
	// A blank quoted line between the parts.
	return strings.Join(parts, "\n\n"), strings.Join(notes, "; ")
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// codeHeader is a code card's first line: kind, name, place, language,
// module, why it was retrieved and the memories that point at it.
func codeHeader(c *Code, label string) string {
	name := c.Name
	if c.Parent != "" && name != "" {
		name = c.Parent + "." + name
	}
	place := c.Path
	if c.Line > 0 {
		place += ":" + strconv.Itoa(c.Line)
		if c.EndLine > c.Line {
			place += "-" + strconv.Itoa(c.EndLine)
		}
	}
	parts := []string{"### " + oneLine(cmpOr(c.Kind, "code"), maxMeta)}
	for _, v := range []string{name, place} {
		if v := oneLine(v, maxMeta*2); v != "" {
			parts = append(parts, v)
		}
	}
	if label != c.Ref() {
		parts = append(parts, "id "+oneLine(label, maxMeta))
	}
	for _, f := range [...]struct{ name, v string }{{"lang", c.Lang}, {"module", c.Module}} {
		if v := oneLine(f.v, maxMeta); v != "" {
			parts = append(parts, f.name+" "+v)
		}
	}
	if len(c.Why) > 0 {
		parts = append(parts, "why "+oneLine(strings.Join(c.Why, "; "), maxMeta*2))
	}
	if len(c.Memories) > 0 {
		parts = append(parts, "memories "+oneLine(strings.Join(c.Memories, ", "), maxMeta*2))
	}
	return strings.Join(parts, " · ") + "\n"
}
