package mira

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/internal/secret/secrettest"
	"github.com/miramem/mira/mem"
)

// Secrets of a few shapes, built at run time (see secrettest).
var (
	stripeKey = "sk_live_51" + secrettest.Fake("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 40, 1)
	githubKey = "ghp_" + secrettest.Fake("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 36, 2)
	awsKeyID  = "AKIA" + secrettest.Fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 3)
)

// secretErr returns the *SecretError inside err, or nil.
func secretErr(err error) *SecretError {
	var se *SecretError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// TestCheckScansEveryField: a secret in any field that is written to a file
// or a commit message is refused, and the refusal names the field.
func TestCheckScansEveryField(t *testing.T) {
	tests := []struct {
		name  string
		entry mem.Entry
		want  string // the start of the first finding
	}{
		{"text", mem.Entry{Body: "deploy with " + stripeKey}, "line 1, column 13: "},
		{"tag", mem.Entry{Body: "x", Tags: []string{stripeKey}}, "tags[0]: line 1, column 1: Stripe"},
		{"second tag", mem.Entry{Body: "x", Tags: []string{"billing", "key " + githubKey}}, "tags[1]: line 1, column 5: GitHub"},
		{"project", mem.Entry{Body: "x", Project: awsKeyID}, "project: line 1, column 1: AWS"},
		{"scope", mem.Entry{Body: "x", Scope: stripeKey}, "scope: line 1, column 1: Stripe"},
		{"source", mem.Entry{Body: "x", Source: "import " + githubKey}, "source: line 1, column 8: GitHub"},
		{"role", mem.Entry{Body: "x", Role: githubKey}, "role: line 1, column 1: GitHub"},
		{"status", mem.Entry{Body: "x", Status: "the password is hunter2correcthorse"}, "status: line 1, column 17: password"},
		{"priority", mem.Entry{Body: "x", Priority: awsKeyID}, "priority: line 1, column 1: AWS"},
		{"level", mem.Entry{Body: "x", Level: awsKeyID}, "level: line 1, column 1: AWS"},
		{"kind", mem.Entry{Body: "x", Kind: githubKey}, "kind: line 1, column 1: GitHub"},
		{"id", mem.Entry{Body: "x", ID: awsKeyID}, "id: line 1, column 1: AWS"},
		{"extra string", mem.Entry{Body: "x", Extra: map[string]any{"ticket": "token " + githubKey}}, "ticket: line 1, column 7: GitHub"},
		{"extra list", mem.Entry{Body: "x", Extra: map[string]any{"refs": []any{"a", 2, awsKeyID}}}, "refs[2]: line 1, column 1: AWS"},
		{"extra map", mem.Entry{Body: "x", Extra: map[string]any{"meta": map[string]any{"ok": true, "env": map[string]any{"KEY": stripeKey}}}},
			"meta.env.KEY: line 1, column 1: Stripe"},
		{"extra typed", mem.Entry{Body: "x", Extra: map[string]any{"hosts": map[string][]string{"db": {"postgres://app:Xk9mQ2pL7vR4@db:5432/app"}}}},
			"hosts.db[0]: line 1, column 16: password in URL"},
		{"extra struct", mem.Entry{Body: "x", Extra: map[string]any{"auth": struct{ User, Pass string }{"ada", githubKey}}}, "auth.pass: line 1, column 1: GitHub"},
		{"extra field name", mem.Entry{Body: "x", Extra: map[string]any{githubKey: "x"}}, "field name: line 1, column 1: GitHub"},
		{"nested field name", mem.Entry{Body: "x", Extra: map[string]any{"env": map[string]any{stripeKey: 1}}}, "env: field name: line 1, column 1: Stripe"},
		{"multi-line extra", mem.Entry{Body: "x", Extra: map[string]any{"log": "first line\nkey " + awsKeyID}}, "log: line 2, column 5: AWS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.entry
			err := Check([]*mem.Entry{&e}, RememberOptions{})
			se := secretErr(err)
			if se == nil {
				t.Fatalf("Check = %v, want a *SecretError", err)
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Errorf("Check = %T, want it inside an *InvalidError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "refusing to store what looks like a secret: "+tc.want) {
				t.Errorf("Check = %q, want it to start with %q", msg, tc.want)
			}
			for _, s := range []string{stripeKey, githubKey, awsKeyID, "Xk9mQ2pL7vR4", "hunter2correcthorse"} {
				if strings.Contains(msg, s) {
					t.Errorf("the refusal %q shows the secret %q", msg, s)
				}
			}
			e = tc.entry
			if err := Check([]*mem.Entry{&e}, RememberOptions{AllowSecret: true}); secretErr(err) != nil {
				t.Errorf("with AllowSecret, Check = %v", err)
			}
		})
	}
}

// TestCheckTextMessage: a secret in the text keeps the message scripts
// match, with no field name before the position.
func TestCheckTextMessage(t *testing.T) {
	err := Check([]*mem.Entry{{Body: "deploy key AKIAZ7QW3ERTYUIOP4AB for prod"}}, RememberOptions{})
	want := "refusing to store what looks like a secret: line 1, column 12: AWS access key ID (aws-access-key-id): AKIA************P4AB " +
		"(the store is committed to git and pasted into prompts)"
	if err == nil || err.Error() != want {
		t.Errorf("Check = %v\nwant %s", err, want)
	}
}

// TestCheckCorpus puts every secret of the corpus into each field that
// takes free text and expects a refusal, and every ordinary note into the
// same fields and expects none.
func TestCheckCorpus(t *testing.T) {
	fields := []struct {
		name string
		put  func(e *mem.Entry, s string)
	}{
		{"text", func(e *mem.Entry, s string) { e.Body = s }},
		// A tag is one line: a key block goes in escaped, as in JSON.
		{"tag", func(e *mem.Entry, s string) { e.Tags = []string{"ops", strings.ReplaceAll(s, "\n", `\n`)} }},
		{"project", func(e *mem.Entry, s string) { e.Project = s }},
		{"extra field", func(e *mem.Entry, s string) { e.Extra = map[string]any{"note": s} }},
	}
	secrets, ordinary := secrettest.Secrets(), secrettest.Ordinary()
	refused, falsePositives := 0, 0
	for _, s := range secrets {
		for _, f := range fields {
			e := &mem.Entry{Body: "see the field"}
			f.put(e, s.Text)
			if err := Check([]*mem.Entry{e}, RememberOptions{}); secretErr(err) == nil {
				t.Errorf("%s in the %s: Check = %v, want a *SecretError", s.Name, f.name, err)
				continue
			}
			refused++
		}
	}
	tried := 0
	for _, text := range ordinary {
		for _, f := range fields {
			e := &mem.Entry{Body: "see the field"}
			f.put(e, text)
			err := Check([]*mem.Entry{e}, RememberOptions{})
			var limit *mem.LimitError
			if secretErr(err) == nil && errors.As(err, &limit) {
				// A certificate does not fit in a tag: refused for its
				// size, which is no judgement of the scanner's.
				continue
			}
			tried++
			if err != nil {
				falsePositives++
				t.Errorf("ordinary note %q in the %s: Check = %v", text, f.name, err)
			}
		}
	}
	n := len(fields)
	t.Logf("secrets refused: %d of %d (%d secrets in %d fields); ordinary notes accepted: %d of %d that fit their field (%d false positives)",
		refused, len(secrets)*n, len(secrets), n, tried-falsePositives, tried, falsePositives)
}

// TestRememberSecretInTag: a secret in a tag or in an extra field is not
// committed, and nothing is written.
func TestRememberSecretInTag(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	for _, e := range []*mem.Entry{
		{Body: "x", Tags: []string{stripeKey}},
		{Body: "x", Project: awsKeyID},
		{Body: "x", Extra: map[string]any{"ticket": []any{githubKey}}},
		{Body: "x", Pin: mem.PinLeased, PinUntil: time.Now().Add(time.Hour), Status: "pw for prod db is S3cr3tP4ss!"},
	} {
		if _, err := m.Remember(ctx, []*mem.Entry{e}, RememberOptions{}); secretErr(err) == nil {
			t.Errorf("Remember(%+v) = %v, want a *SecretError", e, err)
		}
	}
	if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Error("a refused memory was committed")
	}
	if log := gitOut(t, m.Root(), "log", "-p", "--all"); strings.Contains(log, stripeKey) || strings.Contains(log, awsKeyID) || strings.Contains(log, githubKey) {
		t.Error("a secret reached the history")
	}
}

// TestForgetReasonSecret: a credential given as the reason for forgetting
// would land in the tombstone and the commit message (and every later
// push would be refused), so Forget refuses it, writes nothing, and names
// the field; AllowSecret overrides, as for Remember.
func TestForgetReasonSecret(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	res, err := m.Remember(ctx, []*mem.Entry{{Body: "the staging key was rotated"}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Items[0].Entry.ID
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	for _, reason := range []string{"leaked " + githubKey, "pw for prod db is S3cr3tP4ss!"} {
		_, err := m.Forget(ctx, []string{id}, ForgetOptions{Reason: reason})
		se := secretErr(err)
		if se == nil {
			t.Fatalf("Forget with reason %q = %v, want a *SecretError", reason, err)
		}
		if f := se.Findings[0]; f.Field != "reason" {
			t.Errorf("finding in field %q, want reason", f.Field)
		}
		if strings.Contains(err.Error(), reason) {
			t.Errorf("error quotes the secret: %v", err)
		}
	}
	if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Fatal("a forget with a secret reason was committed")
	}
	if _, err := m.Forget(ctx, []string{id}, ForgetOptions{Reason: "leaked " + githubKey, AllowSecret: true}); err != nil {
		t.Fatalf("Forget with AllowSecret: %v", err)
	}
}

// TestRememberManyRefusesFirst: a batch large enough to be checked on
// several cores is refused for the first bad entry in order (the kind at
// 5,000 before the key at 9,000, however the work was shared), and a
// secret anywhere in it keeps the whole batch out.
func TestRememberManyRefusesFirst(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	batch := func() []*mem.Entry {
		es := make([]*mem.Entry, 10000)
		for i := range es {
			es[i] = &mem.Entry{Body: fmt.Sprintf("ordinary note %d", i)}
		}
		es[9000].Body = "the key is " + stripeKey
		return es
	}
	es := batch()
	es[5000].Kind = "recipe"
	_, err := m.Remember(ctx, es, RememberOptions{})
	if err == nil || secretErr(err) != nil || !strings.Contains(err.Error(), "recipe") {
		t.Errorf("Remember = %v, want the kind of entry 5000 refused", err)
	}
	if err := Check(es, RememberOptions{}); err == nil || !strings.Contains(err.Error(), "recipe") {
		t.Errorf("Check = %v, want the kind of entry 5000 refused", err)
	}
	if _, err := m.Remember(ctx, batch(), RememberOptions{}); secretErr(err) == nil {
		t.Errorf("Remember = %v, want a *SecretError", err)
	}
	if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Error("a refused batch was committed")
	}
}

// TestRememberDuplicateWithoutIndex: with no index to look in, a batch
// still finds the memories already stored (each scope and kind's files
// read once for the whole batch), whatever their place in it, and stores
// the rest.
func TestRememberDuplicateWithoutIndex(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	if _, err := m.Remember(ctx, []*mem.Entry{{Body: "the build uses make"}, {Body: "deploys go out on fridays", Kind: mem.KindFact}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(m.Root(), ".index")); err != nil {
		t.Fatal(err)
	}
	var batch []*mem.Entry
	for i := range 40 {
		batch = append(batch, &mem.Entry{Body: fmt.Sprintf("new note %d", i)})
	}
	batch = append(batch, &mem.Entry{Body: "the build uses make"}, &mem.Entry{Body: "deploys go out on fridays"})
	batch = append(batch, &mem.Entry{Body: "deploys go out on fridays", Kind: mem.KindFact})
	res, err := m.Remember(ctx, batch, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dups []string
	for _, it := range res.Items {
		if it.Duplicate {
			dups = append(dups, it.Entry.Kind+": "+it.Entry.Body)
		}
	}
	if want := []string{"note: the build uses make", "fact: deploys go out on fridays"}; !slices.Equal(dups, want) {
		t.Errorf("duplicates %q, want %q", dups, want)
	}
	if len(res.Items) != 43 {
		t.Errorf("%d items, want 43", len(res.Items))
	}
}
