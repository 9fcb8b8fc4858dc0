package mira

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miramem/mira/extract"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

func TestExtractSubject(t *testing.T) {
	adds := []mem.Op{{Op: "add", Kind: "fact", ID: "A"}, {Op: "update", Kind: "fact", ID: "B"}, {Op: "add", Kind: "goal", ID: "C"}}
	tests := []struct {
		ops    []mem.Op
		counts map[string]int
		turns  int
		want   string
	}{
		{adds, map[string]int{"add": 2, "update": 1}, 0, "extract: 2 memories (1 fact, 1 goal); 1 updated"},
		{adds[:1], map[string]int{"add": 1, "delete": 2}, 3, "extract: fact A; 2 deleted, 3 turns read"},
		{nil, map[string]int{"none": 2}, 4, "extract: nothing new; 4 turns read"},
		{nil, nil, 1, "extract: nothing new; 1 turn read"},
	}
	for _, tt := range tests {
		if got := extractSubject(tt.ops, tt.counts, tt.turns); got != tt.want {
			t.Errorf("extractSubject(%v) = %q, want %q", tt.counts, got, tt.want)
		}
	}
}

// extractModel is a chat model on a fake server that answers with replies.
func extractModel(t *testing.T, replies ...llmtest.Reply) (*llm.Client, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t, replies...)
	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "test-model", APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func factsReply(facts ...string) llmtest.Reply {
	var items []map[string]string
	for _, f := range facts {
		items = append(items, map[string]string{"text": f, "kind": "fact"})
	}
	return llmtest.JSON(map[string]any{"facts": items})
}

// TestExtractSecretTags: tags given for the extracted memories are screened
// like those of Remember, before the model is asked, and nothing is written.
func TestExtractSecretTags(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	chat, srv := extractModel(t)
	turns := []extract.Turn{{Role: "user", Text: "I deploy on Fridays."}}
	_, err := m.Extract(ctx, ExtractRequest{Turns: turns, Tags: []string{"ops", stripeKey}, Chat: chat})
	se := secretErr(err)
	if se == nil {
		t.Fatalf("Extract = %v, want a *SecretError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "tags[1]: line 1, column 1: ") || strings.Contains(msg, stripeKey) {
		t.Errorf("Extract = %q, want the tag named and the key masked", msg)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Error("a refused extraction made a commit")
	}

	srv.Push(factsReply("The user deploys on Fridays."))
	res, err := m.Extract(ctx, ExtractRequest{Turns: turns, Tags: []string{"ops", stripeKey}, Chat: chat, AllowSecret: true})
	if err != nil || len(res.Added) != 1 || !slices.Equal(res.Added[0].Tags, []string{"ops", stripeKey}) {
		t.Fatalf("with AllowSecret: %+v, %v", res, err)
	}
}

// TestExtractProjectSecret: the project every extracted memory gets is
// screened too, before the model is asked.
func TestExtractProjectSecret(t *testing.T) {
	m, err := Open(t.Context(), Options{Home: filepath.Join(t.TempDir(), "home"), Config: &Config{}, Project: awsKeyID,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	chat, srv := extractModel(t)
	_, err = m.Extract(t.Context(), ExtractRequest{Turns: []extract.Turn{{Role: "user", Text: "I deploy on Fridays."}}, Chat: chat})
	if secretErr(err) == nil || !strings.Contains(err.Error(), "project: ") {
		t.Errorf("Extract = %v, want a *SecretError about the project", err)
	}
	if len(srv.Requests()) != 0 {
		t.Error("the model was asked")
	}
	if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Error("a refused extraction made a commit")
	}
}

// TestExtractApplyChecks: what reconciliation decided is written only
// through the check Remember makes, and a reason of the model's that looks
// like a secret does not reach the tombstone or the commit message.
func TestExtractApplyChecks(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	old, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindFact, Body: "The user deploys on Mondays."}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	target := old.Items[0].Entry
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	apply := func(project string, actions ...extract.Action) error {
		ap := &extractApply{m: m, st: m.st, scope: mem.DefaultScope, project: project,
			paths: map[string]string{target.ID: target.Path}, model: "test-model", source: "test",
			res: &ExtractResult{Counts: map[string]int{}}}
		return ap.run(ctx, actions, nil)
	}
	fact := extract.Fact{Text: "The user deploys on Fridays.", Kind: mem.KindFact}
	add := extract.Action{Op: extract.OpAdd, ID: m.st.NewID(m.st.Now()), Kind: mem.KindFact, Text: fact.Text, Fact: fact}
	if err := apply(awsKeyID, add); secretErr(err) == nil {
		t.Errorf("run with a secret project = %v, want a *SecretError", err)
	}
	if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Fatal("a refused extraction made a commit")
	}
	del := extract.Action{Op: extract.OpDelete, Target: extract.Memory{ID: target.ID}, Fact: fact, Reason: "superseded; new key " + githubKey}
	if err := apply("", del); err != nil {
		t.Fatal(err)
	}
	if log := gitOut(t, m.Root(), "log", "-p"); strings.Contains(log, githubKey) {
		t.Errorf("the model's reason reached the history:\n%s", log)
	}
}

// With AlsoScopes, a fact is reconciled with the memories of those scopes
// too: one that says the same is not stored again, and one that updates a
// global memory replaces it in the global scope, not the conversation's.
func TestExtractAlsoScopes(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	for _, body := range []string{"The user's editor is Helix.", "The user deploys on Fridays."} {
		if _, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: body}}, RememberOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	chat, srv := extractModel(t,
		factsReply("The user's editor is Helix.", "The user deploys on Tuesdays."),
		llmtest.Func(func(req llmtest.Request) llmtest.Reply {
			// f1 is settled without the model (the same words); f2 updates
			// the Friday memory, listed as m1.
			if !strings.Contains(req.LastUser(), "deploys on Fridays") {
				return llmtest.Error(400, "the global memory was not shown")
			}
			return llmtest.JSON(map[string]any{"decisions": []map[string]string{{"fact": "f1", "action": "UPDATE", "memory": "m1", "text": "The user deploys on Tuesdays.", "reason": "moved"}}})
		}),
	)
	res, err := m.Extract(ctx, ExtractRequest{Scope: "chat", AlsoScopes: []string{mem.DefaultScope},
		Turns: []extract.Turn{{Role: "user", Text: "I use Helix. We deploy on Tuesdays now."}}, Chat: chat})
	if err != nil {
		t.Fatalf("Extract: %v (requests %d)", err, len(srv.Requests()))
	}
	if res.Counts["none"] != 1 || res.Counts["update"] != 1 || len(res.Added) != 1 || res.Added[0].Scope != mem.DefaultScope {
		t.Fatalf("Extract = counts %v, added %+v", res.Counts, res.Added)
	}
	live := map[string]string{}
	m.st.Walk(func(e *mem.Entry) error {
		if !e.Deleted() && e.Kind == mem.KindFact {
			live[e.Body] = e.Scope
		}
		return nil
	}, nil)
	want := map[string]string{"The user's editor is Helix.": "global", "The user deploys on Tuesdays.": "global"}
	if len(live) != 2 || live["The user's editor is Helix."] != "global" || live["The user deploys on Tuesdays."] != "global" {
		t.Errorf("live facts = %v, want %v", live, want)
	}
}
