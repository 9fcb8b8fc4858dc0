package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
)

// sumEnv runs mira-remember and mira-summarize in this process against a
// store in a temporary directory.
type sumEnv struct {
	t    *testing.T
	home string
	env  map[string]string
}

func newSumEnv(t *testing.T) *sumEnv {
	t.Helper()
	dir := t.TempDir()
	return &sumEnv{t: t, home: filepath.Join(dir, "home"), env: map[string]string{
		"MIRA_PROJECT":    "testproj",
		"XDG_CONFIG_HOME": filepath.Join(dir, ".config"),
	}}
}

func (x *sumEnv) run(main func([]string, *IO) int, stdin string, args ...string) (int, string, string) {
	x.t.Helper()
	var out, errb bytes.Buffer
	o := &IO{
		In: strings.NewReader(stdin), Out: &out, Err: &errb,
		Getenv: func(k string) string { return x.env[k] },
		Getwd:  func() (string, error) { return x.home, nil },
	}
	code := main(append([]string{"--home", x.home}, args...), o)
	return code, out.String(), errb.String()
}

func (x *sumEnv) ok(main func([]string, *IO) int, stdin string, args ...string) string {
	x.t.Helper()
	code, out, errs := x.run(main, stdin, args...)
	if code != 0 {
		x.t.Fatalf("exit %d for %s\n%s", code, strings.Join(args, " "), errs)
	}
	return out
}

const conversationText = `We need a cache in front of the product catalogue because the database is slow during sales.
The catalogue service answers in 800 milliseconds at the peak and the target is under 100.
I would like to try Redis first since the team already runs it for sessions.
Keys should expire after ten minutes so that price changes show up quickly.
Please keep the cache optional behind a feature flag called catalogue_cache.
The staging cluster is called kestrel and production is called osprey.`

// TestSummarizeWithModel: with MIRA_MODEL set, summaries come from the
// chat server (an HTTP 500 is retried by the client), the model is
// recorded in front matter and trailer, and the prompt carries the turns.
func TestSummarizeWithModel(t *testing.T) {
	x := newSumEnv(t)
	srv := llmtest.New(t,
		llmtest.Error(500, "overloaded").WithHeader("Retry-After", "0"),
		llmtest.Text("The user wants a Redis cache for the catalogue behind the catalogue_cache flag."),
	)
	x.env["MIRA_MODEL"] = "test-model"
	x.env["OPENAI_BASE_URL"] = srv.URL
	x.env["OPENAI_API_KEY"] = "test-key"
	x.ok(Remember, conversationText, "--kind", "turn", "--role", "user", "--lines")
	if out := x.ok(Summarize, ""); out != "" {
		t.Errorf("stdout = %q, want a quiet run", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want a failed one and its retry", len(reqs))
	}
	if u := reqs[1].LastUser(); !strings.Contains(u, "user: The staging cluster is called kestrel") {
		t.Errorf("prompt lacks the turns:\n%s", u)
	}
	files, _ := filepath.Glob(filepath.Join(x.home, "entries/global/summaries/L1/*.md"))
	if len(files) != 1 {
		t.Fatalf("%d L1 files", len(files))
	}
	data, _ := os.ReadFile(files[0])
	for _, want := range []string{"model: test-model", "detail: brief", "The user wants a Redis cache"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("summary lacks %q:\n%s", want, data)
		}
	}
	if msg := git(t, x.home, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mira-Model: test-model") || !strings.Contains(msg, "Mira-Usage: requests=1 prompt=") {
		t.Errorf("commit message:\n%s", msg)
	}
	// --extractive ignores the model (the server has no replies left).
	x.ok(Remember, conversationText+"\nThe next step is a dashboard for the cache hit rate in Grafana.", "--kind", "turn", "--role", "assistant")
	x.ok(Summarize, "", "--extractive")
	if msg := git(t, x.home, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mira-Model: extractive") {
		t.Errorf("commit message:\n%s", msg)
	}
}

// TestSummarizeModelDown: a model that keeps failing fails the run with
// exit 1, names the scope, and writes nothing.
func TestSummarizeModelDown(t *testing.T) {
	x := newSumEnv(t)
	srv := llmtest.New(t)
	srv.Default(llmtest.Error(400, "model not found"))
	x.env["MIRA_MODEL"] = "missing-model"
	x.env["OPENAI_BASE_URL"] = srv.URL
	x.ok(Remember, conversationText, "--kind", "turn", "--role", "user", "--lines")
	head := git(t, x.home, "rev-parse", "HEAD")
	code, _, errs := x.run(Summarize, "", "-v")
	if code != ExitFailure || !strings.Contains(errs, "mira-summarize: scope global: ") || !strings.Contains(errs, "model not found") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	if git(t, x.home, "rev-parse", "HEAD") != head {
		t.Errorf("a commit was made")
	}
}

// TestSummarizeWhileRemembering: mira-summarize --all in a loop while two
// mira-remember processes add turns: every turn is stored, each is either
// covered by exactly one L1 or in the buffer, and the repository is clean.
func TestSummarizeWhileRemembering(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns many processes")
	}
	r := newRunner(t)
	r.run("mira-remember", "seed memory")
	const writers, each = 2, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+100)
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				text := fmt.Sprintf("Writer %d turn %d: the catalogue cache uses Redis with a ten minute expiry, and staging is kestrel while production is osprey.", w, i)
				c := r.cmd("mira-remember", "--kind", "turn", "--role", "user", "--scope", "conv"+strconv.Itoa(w%2), "--lock-timeout", "60s", text)
				if out, err := c.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("writer %d #%d: %v\n%s", w, i, err, out)
				}
			}
		}()
	}
	var sw sync.WaitGroup
	sw.Add(1)
	runs := 0
	go func() {
		defer sw.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			c := r.cmd("mira-summarize", "--all", "--lock-timeout", "60s", "--max-entries", "0")
			if out, err := c.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("summarize: %v\n%s", err, out)
			}
			runs++
		}
	}()
	wg.Wait()
	close(done)
	sw.Wait()
	r.run("mira-summarize", "--all", "--max-entries", "0")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	commits := strings.Count(git(t, r.home, "log", "--format=%s"), "summarize:")
	t.Logf("%d summarize runs overlapped the writers and made %d commits", runs, commits)
	if commits == 0 {
		t.Errorf("no summarize commit")
	}
	st, err := mem.Open(t.Context(), r.home, "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, scope := range []string{"conv0", "conv1"} {
		turns, _ := filepath.Glob(filepath.Join(r.home, "entries", scope, "turns/user/*.md"))
		total += len(turns)
		state, err := summarize.Load(st, scope, nil, func(err error) { t.Error(err) })
		if err != nil {
			t.Fatal(err)
		}
		covered := map[string]int{}
		l1s, _ := filepath.Glob(filepath.Join(r.home, "entries", scope, "summaries/L1/*.md"))
		for _, f := range l1s {
			rel, _ := filepath.Rel(r.home, f)
			e, err := st.Read(filepath.ToSlash(rel))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range coversOf(e) {
				covered[id]++
			}
		}
		inBuf := map[string]bool{}
		for _, b := range state.Buffer {
			inBuf[b.ID] = true
		}
		for _, f := range turns {
			id := strings.TrimSuffix(filepath.Base(f)[strings.Index(filepath.Base(f), "__")+2:], ".md")
			if covered[id]+btoi(inBuf[id]) != 1 {
				t.Errorf("%s: turn %s covered %d times, in buffer %v", scope, id, covered[id], inBuf[id])
			}
		}
	}
	if total != writers*each {
		t.Errorf("%d turns stored, want %d", total, writers*each)
	}
	if st := git(t, r.home, "status", "--porcelain"); st != "" {
		t.Errorf("git status not clean:\n%s", st)
	}
	git(t, r.home, "fsck", "--full", "--strict")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func coversOf(e *mem.Entry) []string {
	var out []string
	if l, ok := e.Fields()["covers"].([]any); ok {
		for _, v := range l {
			out = append(out, fmt.Sprint(v))
		}
	}
	return out
}

// TestSummarizeManPage: the page documents every flag and the sections
// and exit codes every page has.
func TestSummarizeManPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "man", "mira-summarize.1.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(data), `\-`, "-")
	for _, sec := range []string{"# NAME", "# SYNOPSIS", "# DESCRIPTION", "# OPTIONS", "# EXIT STATUS", "# ENVIRONMENT", "# FILES", "# EXAMPLES", "# SEE ALSO"} {
		if !strings.Contains(page, sec+"\n") {
			t.Errorf("no %s section", sec)
		}
	}
	for _, code := range []string{"**0**", "**1**", "**2**", "**11**", "**130**"} {
		if !strings.Contains(page, code) {
			t.Errorf("EXIT STATUS does not list %s", code)
		}
	}
	k, err := kong.New(&SummarizeCmd{}, kong.Vars(configVars(&Config{}, func(string) string { return "" })), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range k.Model.Node.Flags {
		if !f.Hidden && !strings.Contains(page, "--"+f.Name) {
			t.Errorf("mira-summarize.1.md does not document --%s", f.Name)
		}
	}
}
