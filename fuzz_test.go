package mira

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

// FuzzParseConfig: any configuration file is read or refused with an
// error, never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("home: ~/notes\nrecall: {k: 7, mode: lexical}\ncontext: {budget: {light: 3000}}\n"))
	f.Add([]byte("prices:\n  m: {input: 1, output: 2}\nagent: {allow: [bash]}\n"))
	f.Add([]byte("nope: 1\n"))
	f.Add([]byte("recall: [unclosed\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err == nil && cfg == nil {
			t.Fatal("nil config without an error")
		}
	})
}

// FuzzParseWhen: the time values of flags and tool arguments (--since,
// --until) parse or fail cleanly; a duration ago is never in the future.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"72h", "30d", "2026-11-21", "2026-11-21T10:00:00Z", "-5d", "9999999999d", "1e400h", "", "d"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		ParseUntil(s, now)
		since, err := ParseSince(s, now)
		if err == nil && strings.HasSuffix(s, "h") && !strings.HasPrefix(s, "-") && since.After(now) {
			t.Errorf("ParseSince(%q) = %v, after now", s, since)
		}
	})
}

// FuzzCheck: an entry made of any field values is accepted or refused
// with an *InvalidError, never a panic.
func FuzzCheck(f *testing.F) {
	f.Add("We chose PostgreSQL", "decision", "global", "db", "shop", "", "")
	f.Add("x", "turn", "chat", "", "", "user", "sticky")
	f.Add("key AKIAZ7QW3ERTYUIOP4AB", "", "../etc", "ghp_x", "AKIA", "banana", "leased")
	f.Fuzz(func(t *testing.T, body, kind, scope, tag, project, role, pin string) {
		e := &mem.Entry{Body: body, Kind: kind, Scope: scope, Tags: []string{tag}, Project: project, Role: role, Pin: pin}
		err := Check([]*mem.Entry{e}, RememberOptions{})
		var inv *InvalidError
		if err != nil && !errors.As(err, &inv) {
			t.Errorf("Check = %v, not an InvalidError", err)
		}
	})
}
