package mira

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// TestFactKeysTurnRecall: a turn is recalled by the words of a fact that
// names it in extracted_from, and shown with its own text; the fact stays
// recallable itself. A hand edit that makes the fact name a list of other
// turns moves the key, replacing the fact keeps it, and forgetting it
// drops it; in a warm Memory and a cold one.
func TestFactKeysTurnRecall(t *testing.T) {
	for _, warm := range []bool{true, false} {
		m := open(t, warm)
		ctx := t.Context()
		res, err := m.Remember(ctx, []*mem.Entry{
			{Kind: mem.KindTurn, Role: "user", Scope: "chat", Body: "I went there yesterday and it was so powerful"},
			{Kind: mem.KindTurn, Role: "assistant", Scope: "chat", Body: "That sounds wonderful, tell me more"},
			{Kind: mem.KindTurn, Role: "user", Scope: "chat", Body: "The stories were inspiring"},
		}, RememberOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t1, t2, t3 := res.Items[0].Entry, res.Items[1].Entry, res.Items[2].Entry
		turns := func(step string) []string {
			t.Helper()
			recs, err := m.Recall(ctx, Query{Text: "LGBTQ support group", Kinds: []string{mem.KindTurn}, Scope: "chat", K: 5})
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			var out []string
			for _, r := range recs {
				out = append(out, r.ID)
				if r.ID == t1.ID && r.Text != t1.Body {
					t.Errorf("%s: the turn is shown as %q", step, r.Text)
				}
			}
			return out
		}
		if got := turns("no fact"); len(got) != 0 {
			t.Fatalf("warm %v: turns found before any fact: %v", warm, got)
		}
		fres, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindFact, Scope: "chat", Body: "The user attended an LGBTQ support group",
			Extra: map[string]any{fieldExtractedFrom: t1.ID}}}, RememberOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fact := fres.Items[0].Entry
		if got := turns("fact added"); len(got) == 0 || got[0] != t1.ID {
			t.Errorf("warm %v: after the fact: %v, want %s first", warm, got, t1.ID)
		}
		recs, err := m.Recall(ctx, Query{Text: "LGBTQ support group", Scope: "chat", K: 5})
		if err != nil || len(recs) == 0 || !slices.ContainsFunc(recs, func(r mem.Record) bool { return r.ID == fact.ID }) {
			t.Errorf("warm %v: the fact itself: %v, %v", warm, recs, err)
		}

		// By hand: extracted_from becomes a list of the two other turns.
		p := filepath.Join(m.Root(), filepath.FromSlash(fact.Path))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(b), "extracted_from: "+t1.ID, "extracted_from: ["+t2.ID+", "+t3.ID+"]", 1)
		if edited == string(b) {
			t.Fatalf("no extracted_from line in\n%s", b)
		}
		if err := os.WriteFile(p, []byte(edited), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := turns("edited by hand"); len(got) != 2 || slices.Contains(got, t1.ID) {
			t.Errorf("warm %v: after the hand edit: %v, want %s and %s", warm, got, t2.ID, t3.ID)
		}

		rres, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindFact, Scope: "chat", Body: "The user goes to an LGBTQ support group",
			Extra: map[string]any{fieldExtractedFrom: t1.ID}}}, RememberOptions{Replace: fact.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got := turns("replaced"); !slices.Equal(got, []string{t1.ID}) {
			t.Errorf("warm %v: after the replacement: %v, want [%s]", warm, got, t1.ID)
		}
		if _, err := m.Forget(ctx, []string{rres.Items[0].Entry.ID}, ForgetOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := turns("forgotten"); len(got) != 0 {
			t.Errorf("warm %v: after the forget: %v, want none", warm, got)
		}
	}
}
