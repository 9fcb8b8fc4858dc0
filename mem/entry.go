package mem

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/internal/text"
	"go.yaml.in/yaml/v3"
)

// Kinds of memory. A kind decides the directory an entry lives in.
const (
	KindFact       = "fact"
	KindPreference = "preference"
	KindDecision   = "decision"
	KindCorrection = "correction"
	KindGoal       = "goal"
	KindTask       = "task"
	KindNote       = "note"
	KindTurn       = "turn"
	KindSummary    = "summary"
)

// Kinds lists every kind in the order they are documented.
var Kinds = []string{KindFact, KindPreference, KindDecision, KindCorrection, KindGoal, KindTask, KindNote, KindTurn, KindSummary}

// Roles of conversation turns.
var Roles = []string{"user", "assistant", "tool"}

// Summary levels.
var Levels = []string{"L1", "L2", "L3"}

// Pin values.
const (
	PinSticky = "sticky"
	PinLeased = "leased"
)

// DefaultScope is the scope of a memory that names none.
const DefaultScope = "global"

// Entry is one memory: the front matter fields Mira knows, the body, and the
// parsed front matter it came from so that a rewrite keeps every other field.
type Entry struct {
	ID        string
	Kind      string
	Scope     string
	CreatedAt time.Time
	UpdatedAt time.Time
	Tags      []string
	Project   string
	Source    string
	Role      string
	Status    string
	Priority  string
	Pin       string
	PinUntil  time.Time
	// PinTask is the task a leased pin lasts for: the pin ends when that
	// task is closed (see the root package's IsClosed) or gone.
	PinTask string
	Level   string

	ReplacedBy    string
	DeletedAt     time.Time
	DeletedReason string

	// Extra holds fields to add to the front matter beyond the known ones
	// (from a JSONL import); existing unknown fields live in meta.
	Extra map[string]any

	// Body is the memory's text, without the front matter.
	Body string

	// Path is the file's slash-separated path relative to the store root.
	Path string

	meta     *yaml.Node        // the front matter as read, nil for a new entry
	implicit map[string]string // fields taken from the path, not written back unless changed
}

// known lists the front matter fields Mira interprets, in the order a new
// file gets them.
var known = []string{"id", "kind", "scope", "created_at", "updated_at", "project", "source", "role",
	"status", "priority", "pin", "pin_until", "pin_task", "level", "tags", "replaced_by", "deleted_at", "deleted_reason"}

// ParseError is a file whose front matter cannot be read.
type ParseError struct {
	Path string
	Err  error
}

// Error names the file, its control characters escaped: a file name with
// a line break must not start a line of its own in a message.
func (e *ParseError) Error() string { return Escape(e.Path, false) + ": " + e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads an entry file's bytes. rel is its path relative to the store
// root; it is used in errors and to fill fields the front matter leaves out
// (the id from the file name, the scope and kind from the directories).
// The entry keeps copies of what it needs, never data itself.
//
// A file beyond the limits (MaxFileBytes, MaxMetaBytes, and those of
// CheckLimits), or whose id, from its name or its front matter, is not a
// valid id (see ValidID), is a *ParseError too: it is skipped, as a file
// with broken front matter is.
func Parse(rel string, data []byte) (*Entry, error) {
	return parse(rel, data, nil)
}

// parse is Parse making the front matter's nodes in room, when not nil.
func parse(rel string, data []byte, room *metaRoom) (*Entry, error) {
	if len(data) > MaxFileBytes {
		return nil, &ParseError{rel, tooLarge(int64(len(data)))}
	}
	if err := checkName(rel); err != nil {
		return nil, &ParseError{rel, err}
	}
	yml, body, err := splitFrontMatter(data)
	if err != nil {
		return nil, &ParseError{rel, err}
	}
	m, err := parseMeta(yml, room)
	if err != nil {
		return nil, &ParseError{rel, err}
	}
	e := &Entry{meta: m, Path: rel, Body: strings.TrimRight(strings.TrimPrefix(string(body), "\n"), "\n")}
	if err := e.readMeta(); err != nil {
		return nil, &ParseError{rel, err}
	}
	fillFromPath(e, rel)
	if e.ID == "" {
		return nil, &ParseError{rel, errors.New(`field "id" is missing and the file name carries none`)}
	}
	if !ValidID(e.ID) {
		return nil, &ParseError{rel, fmt.Errorf("field \"id\": %s is not a memory id (1 to 64 letters, digits, '_' and '-')", quote(e.ID, 64))}
	}
	return e, nil
}

// tooLarge is the error of an entry file of n bytes, beyond MaxFileBytes.
func tooLarge(n int64) error {
	return &LimitError{Field: "file", What: ByteSize(int(min(n, 1<<40))), Limit: ByteSize(MaxFileBytes)}
}

// checkName refuses an entry file whose path holds a control character,
// or whose name carries an id (after "__") that is not a valid one: ids
// come from file names, and one with a line break would print as two
// lines.
func checkName(rel string) error {
	for _, r := range rel {
		if r < 0x20 || r == 0x7f {
			return errors.New("the file's path holds a control character")
		}
	}
	if _, id, ok := splitName(path.Base(rel)); ok && !ValidID(id) {
		return fmt.Errorf("the file name's id %s is not a memory id (1 to 64 letters, digits, '_' and '-')", quote(id, 64))
	}
	return nil
}

// quote quotes s for a message, escaped, cut to about n bytes.
func quote(s string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("%q…", text.Cut(s, n))
	}
	return fmt.Sprintf("%q", s)
}

func (e *Entry) readMeta() error {
	m := e.meta
	str := func(key string, dst *string) error {
		v, err := scalarString(m, key)
		*dst = v
		return err
	}
	tm := func(key string, dst *time.Time) error {
		v, err := scalarString(m, key)
		if err != nil || v == "" {
			return err
		}
		t, err := ParseTime(v)
		if err != nil {
			n := metaGet(m, key)
			return fmt.Errorf("line %d: field %q: %w", n.Line+1, key, err)
		}
		*dst = t
		return nil
	}
	var err error
	for _, f := range []error{
		str("id", &e.ID), str("kind", &e.Kind), str("scope", &e.Scope),
		tm("created_at", &e.CreatedAt), tm("updated_at", &e.UpdatedAt),
		str("project", &e.Project), str("source", &e.Source), str("role", &e.Role),
		str("status", &e.Status), str("priority", &e.Priority), str("pin", &e.Pin),
		tm("pin_until", &e.PinUntil), str("pin_task", &e.PinTask), str("level", &e.Level),
		str("replaced_by", &e.ReplacedBy), tm("deleted_at", &e.DeletedAt), str("deleted_reason", &e.DeletedReason),
	} {
		if f != nil && err == nil {
			err = f
		}
	}
	if err != nil {
		return err
	}
	e.Tags, err = stringList(m, "tags")
	if err != nil {
		return err
	}
	if e.Kind != "" && !slices.Contains(Kinds, e.Kind) {
		n := metaGet(m, "kind")
		return fmt.Errorf("line %d: field \"kind\": unknown kind %q (want one of %s)", n.Line+1, e.Kind, strings.Join(Kinds, ", "))
	}
	if e.Pin != "" && e.Pin != PinSticky && e.Pin != PinLeased {
		n := metaGet(m, "pin")
		return fmt.Errorf("line %d: field \"pin\": %q is neither sticky nor leased", n.Line+1, e.Pin)
	}
	return CheckLimits(e)
}

// fillFromPath fills id, scope and kind from a path of the standard layout
// when the front matter leaves them out (a hand-written file).
func fillFromPath(e *Entry, rel string) {
	defer func() {
		e.implicit = map[string]string{}
		for k, v := range map[string]string{"id": e.ID, "kind": e.Kind, "scope": e.Scope} {
			if metaGet(e.meta, k) == nil {
				e.implicit[k] = v
			}
		}
	}()
	p, err := ParsePath(rel)
	if err != nil {
		// Not in the layout (a file being imported): only its name counts.
		_, p.ID, _ = splitName(path.Base(rel))
	}
	if e.ID == "" {
		e.ID = p.ID
	}
	if e.Scope == "" {
		e.Scope = p.Scope
	}
	if e.Kind == "" {
		e.Kind = p.Kind
	}
	if e.Scope == "" {
		e.Scope = DefaultScope
	}
	if e.Kind == "" {
		e.Kind = KindNote
	}
}

// Deleted reports whether the entry is a tombstone.
func (e *Entry) Deleted() bool {
	return !e.DeletedAt.IsZero() || strings.Contains(e.Path, "/deleted/")
}

// Marshal renders the entry as a file: front matter then body. Fields of the
// parsed front matter that Mira does not know keep their place and form.
func (e *Entry) Marshal() ([]byte, error) {
	if err := CheckLimits(e); err != nil {
		return nil, err
	}
	yml, ok := writePlainMeta(e)
	if !ok {
		var err error
		if yml, err = e.encodeMeta(); err != nil {
			return nil, err
		}
	}
	if len(yml) > MaxMetaBytes {
		return nil, tooLong("front matter", len(yml), MaxMetaBytes)
	}
	if n := len(yml) + len(e.Body) + 9; n > MaxFileBytes {
		return nil, tooLarge(int64(n))
	}
	var buf bytes.Buffer
	buf.Grow(len(yml) + len(e.Body) + 16)
	buf.WriteString("---\n")
	buf.Write(yml)
	buf.WriteString("---\n")
	if e.Body != "" {
		buf.WriteString(e.Body)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// encodeMeta renders the front matter through the YAML encoder: the
// parsed front matter with Mira's fields set, other fields as they were.
func (e *Entry) encodeMeta() ([]byte, error) {
	m := e.meta
	if m == nil {
		m = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	} else {
		m = cloneNode(m)
	}
	set := func(key string, n *yaml.Node) {
		old := metaGet(m, key)
		if n == nil {
			if old != nil {
				metaSet(m, key, nil)
			}
			return
		}
		if old != nil && sameValue(old, n) {
			return // keep the user's spelling of an unchanged value
		}
		metaSet(m, key, n)
	}
	str := func(key, v string) {
		if iv, ok := e.implicit[key]; ok && iv == v && metaGet(m, key) == nil {
			return // known from the path; the user left it out
		}
		if v == "" {
			set(key, nil)
			return
		}
		set(key, strNode(v))
	}
	tm := func(key string, t time.Time) {
		if t.IsZero() {
			set(key, nil)
			return
		}
		set(key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: FormatTime(t)})
	}
	for _, key := range known {
		switch key {
		case "id":
			str(key, e.ID)
		case "kind":
			str(key, e.Kind)
		case "scope":
			str(key, e.Scope)
		case "created_at":
			tm(key, e.CreatedAt)
		case "updated_at":
			tm(key, e.UpdatedAt)
		case "project":
			str(key, e.Project)
		case "source":
			str(key, e.Source)
		case "role":
			str(key, e.Role)
		case "status":
			str(key, e.Status)
		case "priority":
			str(key, e.Priority)
		case "pin":
			str(key, e.Pin)
		case "pin_until":
			tm(key, e.PinUntil)
		case "pin_task":
			str(key, e.PinTask)
		case "level":
			str(key, e.Level)
		case "tags":
			if len(e.Tags) == 0 {
				set(key, nil)
			} else {
				set(key, listNode(e.Tags))
			}
		case "replaced_by":
			str(key, e.ReplacedBy)
		case "deleted_at":
			tm(key, e.DeletedAt)
		case "deleted_reason":
			str(key, e.DeletedReason)
		}
	}
	for _, k := range sortedKeys(e.Extra) {
		if slices.Contains(known, k) {
			continue
		}
		var n yaml.Node
		if err := n.Encode(e.Extra[k]); err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		set(k, &n)
	}
	yml, err := encodeMeta(m)
	if err != nil {
		return nil, fmt.Errorf("encode front matter: %w", err)
	}
	return yml, nil
}

// Fields returns the front matter fields Mira does not interpret, decoded,
// for the pipe format. It returns nil when there are none.
func (e *Entry) Fields() map[string]any {
	var out map[string]any
	if e.meta != nil {
		for i := 0; i+1 < len(e.meta.Content); i += 2 {
			k := e.meta.Content[i].Value
			if slices.Contains(known, k) {
				continue
			}
			var v any
			if err := e.meta.Content[i+1].Decode(&v); err != nil {
				continue
			}
			if out == nil {
				out = make(map[string]any)
			}
			out[k] = jsonable(v)
		}
	}
	for k, v := range e.Extra {
		if slices.Contains(known, k) {
			continue
		}
		if out == nil {
			out = make(map[string]any)
		}
		out[k] = v
	}
	return out
}

// jsonable converts YAML-decoded values (which may hold map[string]any with
// non-string keys or time.Time) into values encoding/json accepts.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			x[k] = jsonable(vv)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			out[fmt.Sprint(k)] = jsonable(vv)
		}
		return out
	case []any:
		for i := range x {
			x[i] = jsonable(x[i])
		}
		return x
	case time.Time:
		return FormatTime(x)
	}
	return v
}

func sameValue(a, b *yaml.Node) bool {
	if a.Kind == yaml.AliasNode {
		return false
	}
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode {
		if a.Value != b.Value {
			return false
		}
		// "true" as a string and true as a bool differ.
		return a.ShortTag() == b.ShortTag() || (a.ShortTag() == "!!timestamp" || b.ShortTag() == "!!timestamp") && a.Value == b.Value
	}
	for i := range a.Content {
		if !sameValue(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = cloneNode(k)
		}
	}
	return &c
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// FormatTime renders a time the way Mira writes it: RFC 3339 in UTC, to the
// second unless the time carries sub-second precision.
func FormatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// ParseTime accepts RFC 3339 (with or without fractional seconds), a date
// (2026-11-21, taken as midnight UTC) and "2026-11-21 10:00[:00]".
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05.999999999 -0700 MST"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot parse time %q (want RFC 3339, e.g. 2026-11-21T10:00:00Z, or a date 2026-11-21)", s)
}
