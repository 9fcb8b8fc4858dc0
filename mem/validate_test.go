package mem

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestValidate: each rule of an entry refuses what it names and only
// that: a role is checked on turns, a level on summaries, and a leased
// pin needs its end.
func TestValidate(t *testing.T) {
	until := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		e    Entry
		want string // "" for valid
	}{
		{"a fact", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope}, ""},
		{"unknown kind", Entry{Body: "x", Kind: "rumour", Scope: DefaultScope}, `unknown kind "rumour"`},
		{"bad scope", Entry{Body: "x", Kind: KindFact, Scope: "../x"}, "invalid scope"},
		{"a turn's role", Entry{Body: "x", Kind: KindTurn, Scope: DefaultScope, Role: "user"}, ""},
		{"a turn without a role", Entry{Body: "x", Kind: KindTurn, Scope: DefaultScope}, ""},
		{"a turn's unknown role", Entry{Body: "x", Kind: KindTurn, Scope: DefaultScope, Role: "robot"}, `unknown role "robot"`},
		{"a role on a fact is not checked", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Role: "robot"}, ""},
		{"a summary's level", Entry{Body: "x", Kind: KindSummary, Scope: DefaultScope, Level: "L2"}, ""},
		{"a summary without a level", Entry{Body: "x", Kind: KindSummary, Scope: DefaultScope}, ""},
		{"a summary's unknown level", Entry{Body: "x", Kind: KindSummary, Scope: DefaultScope, Level: "L9"}, `unknown summary level "L9"`},
		{"a level on a fact is not checked", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Level: "L9"}, ""},
		{"sticky pin", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Pin: PinSticky}, ""},
		{"unknown pin", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Pin: "forever"}, `unknown pin "forever"`},
		{"leased pin with its end", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Pin: PinLeased, PinUntil: until}, ""},
		{"leased pin without its end", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Pin: PinLeased}, "a leased pin needs an end"},
		{"leased pin for a task", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Pin: PinLeased, PinTask: "01JTASK0000000000000000000"}, ""},
		{"task lease on a sticky pin", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Pin: PinSticky, PinTask: "01JTASK0000000000000000000"}, "pin_task applies only to a leased pin"},
		{"task lease naming no id", Entry{Body: "x", Kind: KindFact, Scope: DefaultScope, Pin: PinLeased, PinTask: "no such/id"}, `pin_task: "no such/id" is not a memory id`},
	} {
		err := Validate(&tc.e)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestTombstoneOps: forgetting a memory is a delete; replacing it is an
// update that names its replacement.
func TestTombstoneOps(t *testing.T) {
	st, err := Open(context.Background(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tx := st.Begin(true)
	mk := func(body string) *Entry {
		e := &Entry{Body: body, Kind: KindFact, Scope: DefaultScope, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		if err := tx.Add(e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := mk("first"), mk("second")
	if err := tx.Tombstone(a, "obsolete", ""); err != nil {
		t.Fatal(err)
	}
	if err := tx.Tombstone(b, "superseded", "01JD3ZK4Q8V6N2M7T5R9W1X0YC"); err != nil {
		t.Fatal(err)
	}
	ops := tx.Ops[len(tx.Ops)-2:]
	if ops[0].Op != "delete" || ops[0].ReplacedBy != "" || ops[1].Op != "update" || ops[1].ReplacedBy != "01JD3ZK4Q8V6N2M7T5R9W1X0YC" {
		t.Errorf("ops = %+v, want a delete, then an update naming the replacement", ops)
	}
}

// TestValidIDAndScope: the hand-written checks accept exactly what the
// regular expressions they replaced did, over generated names at and
// around every edge (lengths, first character, each byte class).
func TestValidIDAndScope(t *testing.T) {
	idRe := regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)
	scopeRe := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	var names []string
	alphabet := []string{"a", "Z", "0", "9", "_", "-", ".", "/", " ", "é", "\x00", "~", "@", "[", "`", "{", ":"}
	for _, first := range alphabet {
		for _, rest := range alphabet {
			for _, n := range []int{0, 1, 62, 63, 64, 65, 126, 127, 128, 129} {
				names = append(names, first+strings.Repeat(rest, n))
			}
		}
	}
	names = append(names, "", "deleted", "a..b", "global", "01J9ABCDEF", "shop.v2", "..")
	for _, s := range names {
		if got, want := ValidID(s), idRe.MatchString(s); got != want {
			t.Errorf("ValidID(%.20q… len %d) = %v, want %v", s, len(s), got, want)
		}
		want := scopeRe.MatchString(s) && s != "deleted" && !strings.Contains(s, "..")
		if got := ValidScope(s) == nil; got != want {
			t.Errorf("ValidScope(%.20q… len %d) accepted = %v, want %v", s, len(s), got, want)
		}
	}
}
