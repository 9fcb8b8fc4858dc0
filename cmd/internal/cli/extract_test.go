package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// extractEnv runs mira-remember in this process against a store in a
// temporary directory and a fake chat server.
type extractEnv struct {
	t    *testing.T
	home string
	srv  *llmtest.Server
	env  map[string]string
}

func newExtractEnv(t *testing.T, replies ...llmtest.Reply) *extractEnv {
	t.Helper()
	dir := t.TempDir()
	srv := llmtest.New(t, replies...)
	return &extractEnv{t: t, home: filepath.Join(dir, "home"), srv: srv, env: map[string]string{
		"MIRA_MODEL":      "test-model",
		"OPENAI_BASE_URL": srv.URL,
		"OPENAI_API_KEY":  "test-key",
		"MIRA_PROJECT":    "testproj",
		"XDG_CONFIG_HOME": filepath.Join(dir, ".config"),
	}}
}

// run runs mira-remember with args (and --home) and stdin, and returns the
// exit status, stdout and stderr.
func (x *extractEnv) run(stdin string, args ...string) (int, string, string) {
	x.t.Helper()
	var out, errb bytes.Buffer
	o := &IO{
		In: strings.NewReader(stdin), Out: &out, Err: &errb,
		Getenv: func(k string) string { return x.env[k] },
		Getwd:  func() (string, error) { return x.home, nil },
	}
	code := Remember(append([]string{"--home", x.home, "--output", "jsonl"}, args...), o)
	return code, out.String(), errb.String()
}

// ok runs mira-remember and fails the test unless it exits 0.
func (x *extractEnv) ok(stdin string, args ...string) string {
	x.t.Helper()
	code, out, errs := x.run(stdin, args...)
	if code != 0 {
		x.t.Fatalf("mira-remember %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// remember stores a memory without the model and returns its id.
func (x *extractEnv) remember(scope, kind, text string) string {
	x.t.Helper()
	recs := extractRecords(x.t, x.ok("", "--scope", scope, "--kind", kind, text))
	return recs[0].ID
}

func (x *extractEnv) commits() int {
	x.t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(git(x.t, x.home, "rev-list", "--count", "HEAD")))
	if err != nil {
		x.t.Fatal(err)
	}
	return n
}

// entry reads the one file matching the glob under the store.
func (x *extractEnv) entry(glob string) *mem.Entry {
	x.t.Helper()
	files, _ := filepath.Glob(filepath.Join(x.home, filepath.FromSlash(glob)))
	if len(files) != 1 {
		x.t.Fatalf("%s: %d files, want 1", glob, len(files))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		x.t.Fatal(err)
	}
	rel, _ := filepath.Rel(x.home, files[0])
	e, err := mem.Parse(filepath.ToSlash(rel), data)
	if err != nil {
		x.t.Fatal(err)
	}
	return e
}

func (x *extractEnv) count(glob string) int {
	files, _ := filepath.Glob(filepath.Join(x.home, filepath.FromSlash(glob)))
	return len(files)
}

func extractRecords(t *testing.T, out string) []mem.Record {
	t.Helper()
	var recs []mem.Record
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r mem.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("bad JSONL line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func extractOps(t *testing.T, out string) []mem.Op {
	t.Helper()
	var got []mem.Op
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var op mem.Op
		if err := json.Unmarshal([]byte(l), &op); err != nil {
			t.Fatalf("bad op line %q: %v", l, err)
		}
		got = append(got, op)
	}
	return got
}

// factsReply is an extraction reply with the given facts.
func factsReply(facts ...string) llmtest.Reply {
	var items []map[string]string
	for _, f := range facts {
		kind := "fact"
		if k, text, ok := strings.Cut(f, ":: "); ok {
			kind, f = k, text
		}
		items = append(items, map[string]string{"text": f, "kind": kind})
	}
	return llmtest.JSON(map[string]any{"facts": items})
}

// reconcileReply answers a reconciliation with one decision for f1 about the
// listed memory whose text contains about, found by its short id in the
// request, as a model would.
func reconcileReply(t *testing.T, action, about, text, reason string) llmtest.Reply {
	return llmtest.Func(func(r llmtest.Request) llmtest.Reply {
		d := map[string]string{"fact": "f1", "action": action}
		if about != "" {
			d["memory"] = "m0"
			for _, line := range strings.Split(firstUserMessage(r), "\n") {
				if id, rest, ok := strings.Cut(line, " "); ok && strings.HasPrefix(id, "m") && strings.Contains(rest, about) {
					d["memory"] = id
				}
			}
			if d["memory"] == "m0" {
				t.Errorf("no memory about %q listed in the reconciliation request:\n%s", about, firstUserMessage(r))
			}
		}
		if text != "" {
			d["text"] = text
		}
		if reason != "" {
			d["reason"] = reason
		}
		return llmtest.JSON(map[string]any{"decisions": []any{d}})
	})
}

// firstUserMessage is the first user message of a request: the one the command
// wrote, before any repair round.
func firstUserMessage(r llmtest.Request) string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// seed stores the memories the reconciliation tests compare with.
func (x *extractEnv) seed() map[string]string {
	return map[string]string{
		"paris": x.remember("s", "fact", "The user lives in Paris."),
		"tesla": x.remember("s", "fact", "The user drives a Tesla to work."),
		"rex":   x.remember("s", "fact", "The user has a dog named Rex."),
		"pizza": x.remember("s", "preference", "The user loves pizza."),
	}
}

func TestExtractNeedsModel(t *testing.T) {
	x := newExtractEnv(t)
	delete(x.env, "MIRA_MODEL")
	code, _, errs := x.run("I moved to Berlin.", "--extract")
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	for _, want := range []string{"MIRA_MODEL", "OPENAI_BASE_URL", "--model"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not name %s:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(x.home); err == nil {
		t.Error("the store was created although nothing can be extracted")
	}
}

func TestExtractFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--extract", "--lines"},
		{"--extract", "--replace", "01JD3ZK4Q8V6N2M7T5R9W1X0YB"},
		{"--extract", "--kind", "note"},
		{"--extract", "--pin", "sticky"},
		{"--extract", "--role", "user"},
		{"--extract", "--max-turns", "0"},
		{"--extract", "--scope", "../x"},
	} {
		x := newExtractEnv(t)
		if code, _, errs := x.run("text", args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, ExitUsage, errs)
		}
	}
	// The library refuses the number; the message names the flag.
	x := newExtractEnv(t)
	if _, _, errs := x.run("", "--extract", "--max-turns", "0"); !strings.Contains(errs, "--max-turns: must be at least 1") {
		t.Errorf("--max-turns 0: stderr %q, want the flag named", errs)
	}
}

// TestExtractAdd: plain text on stdin, an empty store: the facts are added
// without a reconciliation call, as extract facts, in one commit with the
// model and the source as trailers.
func TestExtractAdd(t *testing.T) {
	x := newExtractEnv(t, llmtest.Text("```json\n"+`{"facts":[{"text":"The user's wife is named Anne.","kind":"fact"},{"text":"The user prefers tea to coffee.","kind":"preference"}]}`+"\n```"))
	x.ok("", "--scope", "other", "seed memory") // the store exists
	before := x.commits()
	out := x.ok("My wife Anne says I should drink more tea than coffee.", "--extract", "--tag", "home")
	recs := extractRecords(t, out)
	if len(recs) != 2 {
		t.Fatalf("printed %d records, want 2:\n%s", len(recs), out)
	}
	for i, want := range []struct{ kind, text string }{{"fact", "The user's wife is named Anne."}, {"preference", "The user prefers tea to coffee."}} {
		r := recs[i]
		if r.Kind != want.kind || r.Text != want.text || r.Source != "extract" || r.Scope != "global" || !cmp.Equal(r.Tags, []string{"home"}) || r.Project != "testproj" {
			t.Errorf("record %d = %+v, want kind %s, text %q, source extract, tag home", i, r, want.kind, want.text)
		}
		if _, err := os.Stat(filepath.Join(x.home, r.Path)); err != nil {
			t.Errorf("record %d not on disk: %v", i, err)
		}
	}
	if got := x.commits(); got != before+1 {
		t.Errorf("%d commits after the run, want %d", got, before+1)
	}
	msg := git(t, x.home, "log", "-1", "--format=%B")
	for _, want := range []string{"extract: 2 memories (1 fact, 1 preference)", "Mira-Command: mira-remember", "Mira-Model: test-model", "Mira-Source: stdin", "Mira-Usage: requests=1 prompt="} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	reqs := x.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1 (nothing to reconcile with)", len(reqs))
	}
	if !reqs[0].JSONMode() || reqs[0].Model != "test-model" || !strings.Contains(reqs[0].LastUser(), "My wife Anne says") {
		t.Errorf("extraction request: json mode %v, model %q, message %q", reqs[0].JSONMode(), reqs[0].Model, reqs[0].LastUser())
	}
	if st := git(t, x.home, "status", "--porcelain"); st != "" {
		t.Errorf("git status not clean:\n%s", st)
	}
}

// TestExtractReconcile runs each decision end to end and looks at the files.
func TestExtractReconcile(t *testing.T) {
	type want struct {
		added    []string // texts of the new memories
		tomb     string   // key of the seed memory tombstoned
		replaced bool     // ... with replaced_by the new memory
		reason   string   // substring of deleted_reason
	}
	tests := []struct {
		name    string
		message string
		replies func(t *testing.T) []llmtest.Reply
		want    want
		warn    string
	}{
		{name: "ADD", message: "My sister Clara lives in Paris too.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{factsReply("The user's sister Clara lives in Paris."), reconcileReply(t, "ADD", "", "", "")}
			},
			want: want{added: []string{"The user's sister Clara lives in Paris."}}},
		{name: "UPDATE", message: "We moved to Berlin last month.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{factsReply("The user lives in Berlin."), reconcileReply(t, "UPDATE", "Paris", "The user lives in Berlin since October 2026.", "the user moved")}
			},
			want: want{added: []string{"The user lives in Berlin since October 2026."}, tomb: "paris", replaced: true, reason: "the user moved"}},
		{name: "DELETE still adds the fact", message: "I sold the Tesla, I take the train now.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{factsReply("The user sold the Tesla."), reconcileReply(t, "DELETE", "Tesla", "", "the user sold the car")}
			},
			want: want{added: []string{"The user sold the Tesla."}, tomb: "tesla", reason: "the user sold the car (contradicted by "}},
		{name: "NONE", message: "Rex is my dog.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{factsReply("The user has a dog called Rex."), reconcileReply(t, "NONE", "Rex", "", "")}
			}},
		{name: "exact duplicate needs no call", message: "Rex is my dog.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{factsReply("The user has a dog named Rex.")}
			}},
		{name: "prose around the JSON", message: "I hate pizza now.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{
					llmtest.Text(`Sure! Here is what I found: {"facts":[{"text":"The user hates pizza.","kind":"preference"}]} Let me know if you need more.`),
					reconcileReply(t, "UPDATE", "pizza", "", "taste changed"),
				}
			},
			want: want{added: []string{"The user hates pizza."}, tomb: "pizza", replaced: true, reason: "taste changed"}},
		{name: "wrong shape repaired", message: "I moved to Berlin.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{
					llmtest.Text(`{"fact":"The user lives in Berlin."}`),
					factsReply("The user lives in Berlin."),
					llmtest.Text(`{"decisions":[{"fact":"f1","action":"REPLACE","memory":"m1"}]}`),
					reconcileReply(t, "UPDATE", "Paris", "", ""),
				}
			},
			want: want{added: []string{"The user lives in Berlin."}, tomb: "paris", replaced: true, reason: "updated"}},
		{name: "HTTP 500 then success", message: "I moved to Berlin.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{llmtest.Error(500, "overloaded"), factsReply("The user lives in Berlin."), reconcileReply(t, "UPDATE", "Paris", "", "moved")}
			},
			want: want{added: []string{"The user lives in Berlin."}, tomb: "paris", replaced: true, reason: "moved"}},
		{name: "failed reconciliation adds the facts", message: "I moved to Berlin.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{factsReply("The user lives in Berlin."), llmtest.Error(400, "model not loaded")}
			},
			want: want{added: []string{"The user lives in Berlin."}},
			warn: "400 Bad Request: model not loaded; the facts are added as they are"},
		{name: "unusable reconciliation adds the facts", message: "I moved to Berlin.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{factsReply("The user lives in Berlin."), llmtest.Text("I think m1 should go."), llmtest.Text(`{"decisions":[{"fact":"f7","action":"ADD"}]}`)}
			},
			want: want{added: []string{"The user lives in Berlin."}},
			warn: "the facts are added as they are"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newExtractEnv(t)
			ids := x.seed()
			x.srv.Push(tt.replies(t)...)
			before := x.commits()
			code, out, errs := x.run(tt.message, "--extract", "--scope", "s")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			if tt.warn != "" && !strings.Contains(errs, tt.warn) {
				t.Errorf("stderr lacks %q:\n%s", tt.warn, errs)
			}
			recs := extractRecords(t, out)
			var texts []string
			for _, r := range recs {
				texts = append(texts, r.Text)
				if r.Source != "extract" || r.Scope != "s" {
					t.Errorf("stored %+v, want source extract in scope s", r)
				}
			}
			if diff := cmp.Diff(tt.want.added, texts); diff != "" {
				t.Errorf("stored texts diff (-want +got):\n%s", diff)
			}
			wantCommits := before
			if len(tt.want.added) > 0 {
				wantCommits++
			}
			if got := x.commits(); got != wantCommits {
				t.Errorf("%d commits, want %d", got, wantCommits)
			}
			for key, id := range ids {
				live := x.count("entries/s/*/*__"+id+".md") == 1
				if key != tt.want.tomb {
					if !live {
						t.Errorf("memory %s (%s) is gone", key, id)
					}
					continue
				}
				if live {
					t.Errorf("memory %s (%s) is still live", key, id)
				}
				tomb := x.entry("entries/s/deleted/*/*__" + id + ".md")
				if tomb.DeletedAt.IsZero() || !strings.Contains(tomb.DeletedReason, tt.want.reason) {
					t.Errorf("tombstone of %s: deleted_at %v, deleted_reason %q, want one with %q", key, tomb.DeletedAt, tomb.DeletedReason, tt.want.reason)
				}
				wantBy := ""
				if tt.want.replaced {
					wantBy = recs[0].ID
				}
				if tomb.ReplacedBy != wantBy {
					t.Errorf("tombstone of %s: replaced_by %q, want %q", key, tomb.ReplacedBy, wantBy)
				}
				if !tt.want.replaced && !strings.Contains(tomb.DeletedReason, recs[0].ID) {
					t.Errorf("deleted_reason %q does not name the new fact %s", tomb.DeletedReason, recs[0].ID)
				}
			}
			if st := git(t, x.home, "status", "--porcelain"); st != "" {
				t.Errorf("git status not clean:\n%s", st)
			}
		})
	}
}

// TestExtractDryRun prints the operations and writes nothing.
func TestExtractDryRun(t *testing.T) {
	x := newExtractEnv(t)
	ids := x.seed()
	x.srv.Push(factsReply("The user lives in Berlin.", "The user has a dog named Rex."), reconcileReply(t, "UPDATE", "Paris", "", "moved"))
	head := git(t, x.home, "rev-parse", "HEAD")
	out := x.ok("We moved to Berlin with Rex, our dog.", "--extract", "--scope", "s", "--dry-run")
	got := extractOps(t, out)
	if len(got) != 3 {
		t.Fatalf("%d ops, want 3:\n%s", len(got), out)
	}
	if got[0].Op != "none" || got[0].Duplicate != ids["rex"] || got[0].ID != ids["rex"] {
		t.Errorf("op 1 = %+v, want none duplicate_of the Rex memory", got[0])
	}
	if got[1].Op != "add" || got[1].Text != "The user lives in Berlin." || got[1].Kind != "fact" || !strings.HasPrefix(got[1].Path, "entries/s/facts/") {
		t.Errorf("op 2 = %+v, want the add of the new fact", got[1])
	}
	if got[2].Op != "update" || got[2].ID != ids["paris"] || got[2].ReplacedBy != got[1].ID || got[2].Reason != "moved" || !strings.Contains(got[2].Path, "/deleted/") {
		t.Errorf("op 3 = %+v, want the update of the Paris memory replaced by %s", got[2], got[1].ID)
	}
	if h := git(t, x.home, "rev-parse", "HEAD"); h != head {
		t.Error("--dry-run made a commit")
	}
	if st := git(t, x.home, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("--dry-run left changes:\n%s", st)
	}
	if x.count("entries/s/*/*__"+ids["paris"]+".md") != 1 || x.count("entries/s/deleted") != 0 {
		t.Error("--dry-run moved a memory")
	}
}

// TestExtractFailure: when extraction itself fails, the command says so,
// exits 1 and writes nothing.
func TestExtractFailure(t *testing.T) {
	x := newExtractEnv(t, llmtest.Error(401, "invalid api key"))
	x.ok("", "seed memory")
	before := x.commits()
	code, out, errs := x.run("I moved to Berlin.", "--extract")
	if code != ExitFailure || out != "" {
		t.Errorf("exit %d, stdout %q, want 1 and nothing", code, out)
	}
	if !strings.Contains(errs, "mira-remember: extraction failed, nothing was written: ") || !strings.Contains(errs, "invalid api key") {
		t.Errorf("stderr = %q", errs)
	}
	if x.commits() != before || x.count("entries/global/facts/*") != 0 {
		t.Error("a failed extraction wrote something")
	}
	// A reply that stays unusable after the repair is a failure too.
	x.srv.Push(llmtest.Text("I cannot help with that."), llmtest.Text("Still no."))
	if code, _, errs := x.run("I moved to Berlin.", "--extract"); code != ExitFailure || !strings.Contains(errs, "unusable model reply") {
		t.Errorf("unusable reply: exit %d, stderr %q", code, errs)
	}
	if x.commits() != before {
		t.Error("a failed extraction made a commit")
	}
}

// TestExtractSecret: a fact that looks like a credential is left out with
// a warning naming the rule, unless --allow-secret.
func TestExtractSecret(t *testing.T) {
	const key = "The deploy key is AKIAZ7QW3ERTYUIOP4AB."
	x := newExtractEnv(t, factsReply(key, "The user deploys on Fridays."), factsReply(key), reconcileReply(t, "ADD", "", "", ""))
	code, out, errs := x.run("deploy stuff", "--extract")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "looks like a secret") || !strings.Contains(errs, "aws-access-key-id") || strings.Contains(errs, "AKIAZ7QW3ERTYUIOP4AB") {
		t.Errorf("stderr = %q, want a warning naming the rule without the key", errs)
	}
	recs := extractRecords(t, out)
	if len(recs) != 1 || recs[0].Text != "The user deploys on Fridays." {
		t.Errorf("stored %+v, want only the harmless fact", recs)
	}
	recs = extractRecords(t, x.ok("deploy stuff", "--extract", "--allow-secret"))
	if len(recs) != 1 || recs[0].Text != key {
		t.Errorf("with --allow-secret stored %+v", recs)
	}
}

// TestExtractSecretTag: a tag that looks like a credential is refused as
// mira-remember refuses it without --extract, before the model is asked
// and before the store is created.
func TestExtractSecretTag(t *testing.T) {
	x := newExtractEnv(t)
	code, out, errs := x.run("I deploy on Fridays.", "--extract", "--tag", "ops,AKIAZ7QW3ERTYUIOP4AB")
	if code != ExitUsage || out != "" {
		t.Errorf("exit %d, stdout %q, want 2 and nothing", code, out)
	}
	if !strings.Contains(errs, "looks like a secret: tags[1]: line 1, column 1: ") || !strings.Contains(errs, "use --allow-secret") ||
		strings.Contains(errs, "AKIAZ7QW3ERTYUIOP4AB") {
		t.Errorf("stderr = %q, want a refusal naming the tag without the key", errs)
	}
	if _, err := os.Stat(x.home); !os.IsNotExist(err) {
		t.Errorf("the refused extraction created the store: %v", err)
	}
	if n := len(x.srv.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}

// TestExtractKind: --kind sets the kind of every extracted memory.
func TestExtractKind(t *testing.T) {
	x := newExtractEnv(t, factsReply("preference:: The user likes Go."))
	recs := extractRecords(t, x.ok("I like Go", "--extract", "--kind", "decision"))
	if len(recs) != 1 || recs[0].Kind != "decision" || !strings.HasPrefix(recs[0].Path, "entries/global/decisions/") {
		t.Errorf("stored %+v, want one decision", recs)
	}
}

// TestExtractJSONL: JSONL turns on stdin; facts come from user messages
// only, each shown with the assistant message before it.
func TestExtractJSONL(t *testing.T) {
	x := newExtractEnv(t, factsReply("The user has two cats."), factsReply())
	in := `{"role":"assistant","text":"Do you have pets?"}
{"role":"user","text":"Two cats.","created_at":"2026-03-01T10:00:00Z"}
{"role":"assistant","text":"Nice!"}
{"text":"ok thanks"}
`
	recs := extractRecords(t, x.ok(in, "--extract"))
	if len(recs) != 1 || recs[0].Text != "The user has two cats." {
		t.Errorf("stored %+v", recs)
	}
	reqs := x.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (one per user message)", len(reqs))
	}
	first := reqs[0].LastUser()
	if !strings.Contains(first, "Do you have pets?") || !strings.Contains(first, "Two cats.") || !strings.Contains(first, "2026-03-01") {
		t.Errorf("first extraction message:\n%s", first)
	}
	if !strings.Contains(reqs[1].LastUser(), "Nice!") || !strings.Contains(reqs[1].LastUser(), "ok thanks") {
		t.Errorf("second extraction message:\n%s", reqs[1].LastUser())
	}
	if msg := git(t, x.home, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mira-Source: stdin") {
		t.Errorf("commit message:\n%s", msg)
	}

	// A malformed line: exit 2 naming it, no model call, nothing written.
	y := newExtractEnv(t)
	code, _, errs := y.run("{\"role\":\"user\",\"text\":\"a\"}\n{\"role\":\"user\",\n", "--extract")
	if code != ExitUsage || !strings.Contains(errs, "<stdin>:2: invalid JSON") {
		t.Errorf("bad JSONL: exit %d, stderr %q", code, errs)
	}
	code, _, errs = y.run(`{"role":"assistant","text":"hello"}`, "--extract")
	if code != ExitUsage || !strings.Contains(errs, "no user messages") {
		t.Errorf("no user messages: exit %d, stderr %q", code, errs)
	}
}

// TestExtractStoredTurns: without input, the scope's user turns not read
// before are read, oldest first; they are marked extracted_at in the same
// commit, and the facts name them in extracted_from.
func TestExtractStoredTurns(t *testing.T) {
	x := newExtractEnv(t)
	turns := `{"kind":"turn","role":"assistant","text":"Where do you live?","created_at":"2026-11-01T10:00:00Z"}
{"kind":"turn","role":"user","text":"In Paris.","created_at":"2026-11-01T10:00:05Z"}
{"kind":"turn","role":"user","text":"Thanks!","created_at":"2026-11-01T10:01:00Z"}
{"kind":"turn","role":"assistant","text":"What do you drink?","created_at":"2026-11-01T10:02:00Z"}
{"kind":"turn","role":"user","text":"Tea, always.","created_at":"2026-11-01T10:02:30Z"}
`
	x.ok(turns, "--jsonl", "--scope", "conv1")
	userTurns := func() map[string]*mem.Entry {
		m := map[string]*mem.Entry{}
		files, _ := filepath.Glob(filepath.Join(x.home, "entries/conv1/turns/user/*.md"))
		for _, f := range files {
			rel, _ := filepath.Rel(x.home, f)
			data, _ := os.ReadFile(f)
			e, err := mem.Parse(filepath.ToSlash(rel), data)
			if err != nil {
				t.Fatal(err)
			}
			m[e.Body] = e
		}
		return m
	}

	// --max-turns 2: the two oldest user turns.
	x.srv.Push(factsReply("The user lives in Paris."), factsReply())
	before := x.commits()
	recs := extractRecords(t, x.ok("", "--extract", "--scope", "conv1", "--max-turns", "2"))
	reqs := x.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].LastUser(), "Where do you live?") || !strings.Contains(reqs[0].LastUser(), "In Paris.") ||
		!strings.Contains(reqs[1].LastUser(), "Thanks!") || strings.Contains(reqs[1].LastUser(), "Where do you live?") {
		t.Fatalf("requests: %d\n%v", len(reqs), reqs)
	}
	ut := userTurns()
	if len(recs) != 1 || recs[0].Extra["extracted_from"] != ut["In Paris."].ID {
		t.Errorf("stored %+v, want the fact with extracted_from %s", recs, ut["In Paris."].ID)
	}
	for body, read := range map[string]bool{"In Paris.": true, "Thanks!": true, "Tea, always.": false} {
		if _, ok := ut[body].Fields()["extracted_at"]; ok != read {
			t.Errorf("turn %q: extracted_at present %v, want %v", body, ok, read)
		}
	}
	if x.commits() != before+1 {
		t.Errorf("%d commits, want %d", x.commits(), before+1)
	}
	if msg := git(t, x.home, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mira-Source: conv1") || !strings.Contains(msg, "2 turns read") {
		t.Errorf("commit message:\n%s", msg)
	}

	// The next run goes on with the last turn, which answers "What do you
	// drink?"; its fact is reconciled with the fact stored before.
	x.srv.Push(factsReply("preference:: The user always drinks tea."), reconcileReply(t, "ADD", "", "", ""))
	recs = extractRecords(t, x.ok("", "--extract", "--scope", "conv1"))
	reqs = x.srv.Requests()[2:]
	if len(recs) != 1 || len(reqs) != 2 || !strings.Contains(reqs[0].LastUser(), "What do you drink?") || !strings.Contains(reqs[0].LastUser(), "Tea, always.") {
		t.Fatalf("second run: stored %+v, requests %d", recs, len(reqs))
	}
	if !strings.Contains(reqs[1].LastUser(), "m1 (fact): The user lives in Paris.") {
		t.Errorf("the new fact was not compared with the one stored before:\n%s", reqs[1].LastUser())
	}

	// Nothing left: no call, no commit.
	before = x.commits()
	if out := x.ok("", "--extract", "--scope", "conv1"); out != "" {
		t.Errorf("third run printed %q", out)
	}
	if x.commits() != before || len(x.srv.Requests()) != 4 {
		t.Errorf("third run: %d commits (want %d), %d requests (want 4)", x.commits(), before, len(x.srv.Requests()))
	}
	if st := git(t, x.home, "status", "--porcelain"); st != "" {
		t.Errorf("git status not clean:\n%s", st)
	}
}
