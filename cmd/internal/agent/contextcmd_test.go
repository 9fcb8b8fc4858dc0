package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/llm/llmtest"
)

// jsonLines decodes JSONL output.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q (%v)", l, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// lastSent are the non-system messages of the fake server's last request.
func lastSent(x *agentEnv) string {
	var b strings.Builder
	for _, m := range x.srv.Last().Messages {
		if m.Role != "system" {
			b.WriteString(m.Role + ": " + m.Content + "\n")
		}
	}
	return b.String()
}

// /context's subcommands and mira-agent context run one implementation:
// stats is stats, not a query, in both.
func TestAgentContextStatsIsASubcommand(t *testing.T) {
	x := newAgentEnv(t)
	x.srv.Default(llmtest.Text("fine"))
	x.ok("", "-p", "first question")
	x.ok("", "-p", "second question")
	for _, args := range [][]string{{"-p", "/context stats", "--output", "jsonl"}, {"--output", "jsonl", "context", "stats"}} {
		rows := jsonLines(t, x.ok("", args...))
		if len(rows) != 1 {
			t.Fatalf("%v printed %d lines", args, len(rows))
		}
		msgs, _ := rows[0]["messages"].(map[string]any)
		if msgs["user"] != 2.0 || msgs["assistant"] != 2.0 || rows[0]["buffer_limit"] != 24000.0 || rows[0]["created"] == nil {
			t.Errorf("%v = %v", args, rows[0])
		}
	}
	// Text that names no subcommand is still a query.
	if out := x.ok("", "-p", "/context the release plans", "--output", "text"); !strings.Contains(out, `memories recalled for "the release plans"`) {
		t.Errorf("/context QUERY = %q", out)
	}
	if out := x.ok("", "-p", "/context -- stats", "--output", "text"); !strings.Contains(out, `memories recalled for "stats"`) {
		t.Errorf("/context -- stats = %q", out)
	}
	// A word that looks like a subcommand is refused, with a suggestion.
	for _, args := range [][]string{{"-p", "/context stat"}, {"context", "stat"}, {"context", "mesages"}} {
		code, _, errs := x.run("", args...)
		if code != cli.ExitUsage || !strings.Contains(errs, "unknown subcommand") || !strings.Contains(errs, "did you mean") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	if code, _, errs := x.run("", "context", "stats", "--output", "text"); code != cli.ExitUsage || !strings.Contains(errs, "go before context") {
		t.Errorf("a flag after context: exit %d, %q", code, errs)
	}
	if code, _, errs := x.run("", "hello"); code != cli.ExitUsage || !strings.Contains(errs, "unexpected argument") {
		t.Errorf("mira-agent hello: exit %d, %q", code, errs)
	}
}

// The whole cycle: messages, add, artifacts, show, prune, clear, export,
// compact, with what the model is sent checked at the fake server.
func TestAgentContextCommands(t *testing.T) {
	x := newAgentEnv(t)
	x.srv.Default(llmtest.Text("ok"))
	x.ok("", "-p", "tell me about the weather "+strings.Repeat("chatter ", 300))
	x.ok("", "-p", "fix the parser")
	x.ok("", "-p", "and the parser tests")

	rows := jsonLines(t, x.ok("", "context", "messages", "--role", "user", "--last", "2"))
	if len(rows) != 2 || !strings.Contains(rows[0]["text"].(string), "fix the parser") || rows[1]["shown"] != true {
		t.Errorf("messages --role user --last 2 = %v", rows)
	}
	out := x.ok("", "--output", "text", "context", "messages")
	if strings.Count(out, "\n") != 6 || !strings.Contains(out, "user") {
		t.Errorf("messages (text) =\n%s", out)
	}

	// add: an artifact, committed with a turn that tells the model.
	x.write("notes.txt", "alpha\nbeta\ngamma\n")
	rows = jsonLines(t, x.ok("", "context", "add", "notes.txt"))
	art, _ := rows[0]["artifact"].(map[string]any)
	id, _ := art["id"].(string)
	if id == "" || art["type"] != "file" || art["lines"] != 3.0 {
		t.Fatalf("add = %v", rows)
	}
	x.ok("", "-p", "what did I add?")
	if sent := lastSent(x); !strings.Contains(sent, "artifact://"+id) {
		t.Errorf("the model was not told about the file:\n%s", sent)
	}
	rows = jsonLines(t, x.ok("", "context", "artifacts"))
	if len(rows) != 1 || rows[0]["id"] != id || rows[0]["source"] != filepath.Join(x.proj, "notes.txt") {
		t.Errorf("artifacts = %v", rows)
	}
	if out := x.ok("", "context", "show", id); out != "alpha\nbeta\ngamma\n" {
		t.Errorf("show = %q", out)
	}
	if out := x.ok("", "-p", "/context show artifact://"+id); out != "alpha\nbeta\ngamma\n" {
		t.Errorf("/context show = %q", out)
	}
	for _, bad := range []string{"../" + id, "/etc/passwd", "chat/" + id, "..", "nope"} {
		if code, out, errs := x.run("", "context", "show", bad); code != cli.ExitUsage || out != "" || errs == "" {
			t.Errorf("show %q: exit %d, out %q, err %q", bad, code, out, errs)
		}
	}

	// prune: the chatter leaves what the model sees, not the store.
	rows = jsonLines(t, x.ok("", "context", "prune", "--max-tokens", "200", "--keep-recent", "4"))
	pruned, _ := rows[0]["pruned"].([]any)
	if len(pruned) == 0 {
		t.Fatalf("prune = %v", rows)
	}
	x.ok("", "-p", "next")
	if sent := lastSent(x); strings.Contains(sent, "weather") || !strings.Contains(sent, "what did I add?") {
		t.Errorf("after pruning the model is sent:\n%s", sent)
	}
	turns := len(x.turns("chat"))
	if turns != 11 {
		t.Errorf("the store has %d turns, want 11", turns)
	}

	// clear: the model starts afresh.
	x.ok("", "context", "clear")
	x.ok("", "-p", "after clearing")
	if sent := lastSent(x); strings.Count(sent, "\n") != 1 || !strings.Contains(sent, "after clearing") {
		t.Errorf("after clearing the model is sent:\n%s", sent)
	}
	if n := len(x.turns("chat")); n != turns+2 {
		t.Errorf("the store has %d turns, want %d", n, turns+2)
	}

	// export, by extension.
	x.ok("", "context", "export", "conv.json")
	data, err := os.ReadFile(filepath.Join(x.proj, "conv.json"))
	var exported map[string]any
	if err != nil || json.Unmarshal(data, &exported) != nil || exported["conversation"] != "chat" {
		t.Errorf("export conv.json: %v\n%s", err, data)
	}
	if code, _, errs := x.run("", "context", "export", "conv.txt"); code != cli.ExitUsage || !strings.Contains(errs, ".json or .md") {
		t.Errorf("export conv.txt: exit %d, %q", code, errs)
	}

	// compact summarizes the buffer.
	rows = jsonLines(t, x.ok("", "--summarizer", "extractive", "context", "compact"))
	if last := rows[len(rows)-1]; last["summarized"] != 2.0 || last["buffer_turns"] != 0.0 {
		t.Errorf("compact = %v", rows)
	}
}

func TestAgentContextCompletion(t *testing.T) {
	got := agentComplete("/context ad")
	want := []string{"/context add ", "/context add-folder ", "/context add-search "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("complete /context ad = %q, want %q", got, want)
	}
	if got := agentComplete("/context st"); strings.Join(got, "|") != "/context stats" {
		t.Errorf("complete /context st = %q", got)
	}
	if got := agentComplete("/context add x"); got != nil {
		t.Errorf("complete past the subcommand = %q", got)
	}
	if got := agentComplete("/con"); len(got) != 1 || got[0] != "/context " {
		t.Errorf("complete /con = %q", got)
	}
}

func TestSplitWords(t *testing.T) {
	got, err := splitWords(`add "my notes.txt"  'a b' c`)
	if err != nil || strings.Join(got, "|") != "add|my notes.txt|a b|c" {
		t.Errorf("splitWords = %q, %v", got, err)
	}
	if _, err := splitWords(`add "open`); err == nil {
		t.Error("an open quote was accepted")
	}
}
