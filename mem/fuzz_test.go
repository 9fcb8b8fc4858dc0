package mem

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParsePath: any path parses or is refused; a parsed path gives back
// what it parsed. (A directory made by hand may name a scope Mira would
// not: its files are still read, so the scope is not checked here.)
func FuzzParsePath(f *testing.F) {
	for _, p := range []string{
		"entries/global/facts/20261121T100000Z__01J9ABC.md",
		"entries/chat/turns/user/20261121T100000Z__01J9ABC.md",
		"entries/g/deleted/notes/x__y.md", "entries/../x.md", "entries/deleted/facts/a.md", "", "entries//x.md",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		ep, err := ParsePath(p)
		if err != nil {
			return
		}
		if ep.Scope == "" || strings.Contains(ep.Scope, "/") {
			t.Errorf("ParsePath(%q) scope %q", p, ep.Scope)
		}
		if ep.String() != p {
			t.Errorf("ParsePath(%q).String() = %q", p, ep.String())
		}
	})
}

// FuzzRecord: any JSON line decodes into a record or fails; a record
// encodes again.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(`{"id":"01J9","kind":"decision","text":"x","tags":["db"],"created_at":"2026-11-21T10:00:00Z","extra":{"a":[1,2]}}`))
	f.Add([]byte(`{"text":1}`))
	f.Add([]byte(`{"created_at":"yesterday"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Record
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("a decoded record does not encode: %v", err)
		}
		r.Entry()
	})
}
