package mem

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Record is the pipe format: one JSON object per line, the same shape in and
// out of every command. Fields are only ever added; readers ignore the ones
// they do not know, and Extra carries them through a pipeline.
type Record struct {
	ID            string     `json:"id,omitempty"`
	Kind          string     `json:"kind,omitempty"`
	Scope         string     `json:"scope,omitempty"`
	Text          string     `json:"text"`
	CreatedAt     *time.Time `json:"created_at,omitempty"`
	UpdatedAt     *time.Time `json:"updated_at,omitempty"`
	Tags          []string   `json:"tags,omitempty"`
	Project       string     `json:"project,omitempty"`
	Source        string     `json:"source,omitempty"`
	Role          string     `json:"role,omitempty"`
	Status        string     `json:"status,omitempty"`
	Priority      string     `json:"priority,omitempty"`
	Pin           string     `json:"pin,omitempty"`
	PinUntil      *time.Time `json:"pin_until,omitempty"`
	PinTask       string     `json:"pin_task,omitempty"`
	Level         string     `json:"level,omitempty"`
	ReplacedBy    string     `json:"replaced_by,omitempty"`
	DeletedAt     *time.Time `json:"deleted_at,omitempty"`
	DeletedReason string     `json:"deleted_reason,omitempty"`
	Path          string     `json:"path,omitempty"`
	Score         *float64   `json:"score,omitempty"`
	Why           any        `json:"why,omitempty"`

	// Extra holds every other field, in and out.
	Extra map[string]any `json:"-"`
}

var recordFields = []string{"id", "kind", "scope", "text", "created_at", "updated_at", "tags", "project", "source",
	"role", "status", "priority", "pin", "pin_until", "pin_task", "level", "replaced_by", "deleted_at", "deleted_reason", "path", "score", "why"}

type recordAlias Record

// MarshalJSON writes the known fields in their fixed order, then Extra's in
// name order, without HTML escaping.
func (r Record) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(recordAlias(r)); err != nil {
		return nil, err
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	if len(r.Extra) == 0 {
		return out, nil
	}
	out = append([]byte(nil), out...) // buf is reused below
	out = out[:len(out)-1]            // drop '}'
	for _, k := range sortedKeys(r.Extra) {
		if slices.Contains(recordFields, k) {
			continue
		}
		buf.Reset()
		if err := enc.Encode(k); err != nil {
			return nil, err
		}
		out = append(out, ',')
		out = append(out, bytes.TrimRight(buf.Bytes(), "\n")...)
		out = append(out, ':')
		buf.Reset()
		if err := enc.Encode(r.Extra[k]); err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		out = append(out, bytes.TrimRight(buf.Bytes(), "\n")...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the known fields and keeps the rest in Extra.
func (r *Record) UnmarshalJSON(data []byte) error {
	var a recordAlias
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	*r = Record(a)
	for k, v := range all {
		if slices.Contains(recordFields, k) {
			continue
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		// encoding/json reads values nested up to 10,000 levels deep,
		// and then refuses a record that wraps one as too deep.
		if JSONDepth(x) > MaxDepth {
			return &LimitError{Field: k, What: "nested more deeply", Limit: fmt.Sprint(MaxDepth, " levels")}
		}
		if r.Extra == nil {
			r.Extra = make(map[string]any)
		}
		r.Extra[k] = x
	}
	return nil
}

func tp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// Record converts an entry to the pipe format.
func (e *Entry) Record() Record {
	return Record{
		ID: e.ID, Kind: e.Kind, Scope: e.Scope, Text: e.Body,
		CreatedAt: tp(e.CreatedAt), UpdatedAt: tp(e.UpdatedAt), Tags: e.Tags,
		Project: e.Project, Source: e.Source, Role: e.Role, Status: e.Status, Priority: e.Priority,
		Pin: e.Pin, PinUntil: tp(e.PinUntil), PinTask: e.PinTask, Level: e.Level,
		ReplacedBy: e.ReplacedBy, DeletedAt: tp(e.DeletedAt), DeletedReason: e.DeletedReason,
		Path: e.Path, Extra: e.Fields(),
	}
}

// Entry converts a record read from a pipe into a new entry. The id, path,
// score and tombstone fields are not taken over: a stored record gets a new
// identity.
func (r Record) Entry() *Entry {
	e := &Entry{
		Kind: r.Kind, Scope: r.Scope, Body: r.Text, Tags: r.Tags, Project: r.Project, Source: r.Source,
		Role: r.Role, Status: r.Status, Priority: r.Priority, Pin: r.Pin, PinTask: r.PinTask, Level: r.Level,
	}
	if r.CreatedAt != nil {
		e.CreatedAt = r.CreatedAt.UTC()
	}
	if r.UpdatedAt != nil {
		e.UpdatedAt = r.UpdatedAt.UTC()
	}
	if r.PinUntil != nil {
		e.PinUntil = r.PinUntil.UTC()
	}
	if len(r.Extra) > 0 {
		e.Extra = r.Extra
	}
	return e
}
