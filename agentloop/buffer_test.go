package agentloop_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/agentloop/tools"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/sashabaranov/go-openai"
)

// sentTexts are the contents of the conversation messages of the last
// request, system messages left out.
func sentTexts(r *rig) []string {
	var out []string
	for _, m := range r.srv.Last().Messages {
		if m.Role != openai.ChatMessageRoleSystem {
			out = append(out, m.Content)
		}
	}
	return out
}

func containsText(texts []string, part string) bool {
	return slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, part) })
}

// Prune leaves the least relevant older exchanges out of the requests,
// keeps the newest turns and every call with its result, and changes
// nothing in the store; a restarted agent prunes the same.
func TestPruneByRelevance(t *testing.T) {
	r := newRig(t, nil)
	r.srv.Default(llmtest.Text("ok"))
	r.srv.Push(llmtest.Text("noted about the weather"))
	r.send("the weather is nice today, unrelated chatter " + strings.Repeat("blah ", 200))
	r.srv.Push(llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo parser-output"})}), llmtest.Text("the parser runs"))
	r.send("run the parser tests")
	r.srv.Push(llmtest.Text("more chatter"))
	r.send("lunch was good " + strings.Repeat("blah ", 200))
	r.send("fix the parser bug")
	r.send("and the parser docs")
	before := len(r.turns())

	res, err := r.agent.Prune(PruneOptions{MaxTokens: 120, KeepRecent: 4})
	if err != nil {
		t.Fatal(err)
	}
	var pruned []string
	for _, m := range res.Pruned {
		pruned = append(pruned, m.Text)
	}
	if !containsText(pruned, "weather is nice") || !containsText(pruned, "lunch was good") {
		t.Errorf("pruned %q, want the chatter", pruned)
	}
	if containsText(pruned, "fix the parser bug") || containsText(pruned, "and the parser docs") {
		t.Errorf("pruned %q: a recent turn went", pruned)
	}
	// A reply that called a tool goes with its result, or stays with it.
	callGone, resultGone := containsText(pruned, "→ bash"), containsText(pruned, "parser-output")
	if callGone != resultGone {
		t.Errorf("a call and its result were parted: %q", pruned)
	}
	if len(r.turns()) != before {
		t.Errorf("the store has %d turns, had %d: pruning removed turns", len(r.turns()), before)
	}
	if out, _ := exec.Command("git", "-C", r.home, "status", "--porcelain").CombinedOutput(); len(out) != 0 {
		t.Errorf("git status after pruning:\n%s", out)
	}

	r.send("next")
	sent := sentTexts(r)
	if containsText(sent, "weather is nice") || containsText(sent, "lunch was good") {
		t.Errorf("the model still sees pruned turns: %q", sent)
	}
	if !containsText(sent, "fix the parser bug") || !containsText(sent, "next") {
		t.Errorf("the model lost recent turns: %q", sent)
	}

	// A restarted agent sees the same.
	r.agent = r.open()
	r.send("after a restart")
	if sent := sentTexts(r); containsText(sent, "weather is nice") || !containsText(sent, "fix the parser bug") {
		t.Errorf("after a restart the model sees %q", sent)
	}
	msgs, err := r.agent.Messages("", 0)
	if err != nil {
		t.Fatal(err)
	}
	hidden := 0
	for _, m := range msgs {
		if !m.Shown {
			hidden++
		}
	}
	if hidden != len(res.Pruned) || len(msgs) != len(r.turns()) {
		t.Errorf("messages: %d, %d not shown; want %d, %d not shown", len(msgs), hidden, len(r.turns()), len(res.Pruned))
	}
	if _, err := r.agent.Prune(PruneOptions{Strategy: "size"}); err == nil || !strings.Contains(err.Error(), "relevance") {
		t.Errorf("an unknown strategy: %v", err)
	}
}

// Clear starts the buffer afresh; the summary and the store stay.
func TestClearStartsFresh(t *testing.T) {
	r := newRig(t, nil)
	r.srv.Default(llmtest.Text("ok"))
	r.send("first secret plan")
	r.send("second message")
	n, err := r.agent.Clear()
	if err != nil || n != 4 {
		t.Fatalf("Clear = %d, %v; want 4 turns", n, err)
	}
	r.send("after clearing")
	sent := sentTexts(r)
	if len(sent) != 1 || !strings.Contains(sent[0], "after clearing") {
		t.Errorf("after clearing the model sees %q", sent)
	}
	if len(r.turns()) != 6 {
		t.Errorf("the store has %d turns, want all 6", len(r.turns()))
	}
	user, err := r.agent.Messages("user", 0)
	if err != nil || len(user) != 3 || user[0].Shown || !user[2].Shown {
		t.Errorf("user messages = %+v, %v", user, err)
	}
	last, err := r.agent.Messages("", 1)
	if err != nil || len(last) != 1 || last[0].Role != "assistant" {
		t.Errorf("the last message = %+v, %v", last, err)
	}
	if _, err := r.agent.Messages("robot", 0); err == nil || !strings.Contains(err.Error(), "user, assistant, tool") {
		t.Errorf("an unknown role: %v", err)
	}
	st, err := r.agent.Stats(nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages["user"] != 1 || st.Messages["assistant"] != 1 || st.Hidden != 4 || st.Created.IsZero() || st.Updated.Before(st.Created) {
		t.Errorf("stats = %+v", st)
	}
}

// Adding a file stores it as an artifact, committed with a user turn that
// tells the model where it is; the stats count it.
func TestAddFileTellsTheModel(t *testing.T) {
	r := newRig(t, nil)
	r.srv.Default(llmtest.Text("ok"))
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	arts := &tools.Artifacts{Store: r.home, Scope: "chat"}
	added, err := r.agent.AddFile(context.Background(), arts, file, 0)
	if err != nil {
		t.Fatal(err)
	}
	if added.Artifact.Type != tools.ArtifactFile || added.Artifact.Lines != 2 || added.Artifact.Source != file {
		t.Errorf("artifact = %+v", added.Artifact)
	}
	r.send("what is in it?")
	if sent := sentTexts(r); !containsText(sent, "artifact://"+added.Artifact.ID) {
		t.Errorf("the model was not told: %q", sent)
	}
	out, err := exec.Command("git", "-C", r.home, "log", "--format=%s", "--name-only", "--", added.Artifact.Path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "agent: user turn") {
		t.Errorf("git log of the artifact: %v\n%s", err, out)
	}
	if _, err := r.agent.AddFile(context.Background(), arts, filepath.Dir(file), 0); err == nil || !strings.Contains(err.Error(), "add-folder") {
		t.Errorf("adding a directory as a file: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "a.out")
	os.WriteFile(bin, []byte("\x7fELF\x00\x00binary"), 0o644)
	if _, err := r.agent.AddFile(context.Background(), arts, bin, 0); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("adding a binary file: %v", err)
	}
	folder, err := r.agent.AddFolder(context.Background(), arts, filepath.Dir(file))
	if err != nil || folder.Artifact.Type != tools.ArtifactFolder {
		t.Fatalf("AddFolder = %+v, %v", folder, err)
	}
	st, err := r.agent.Stats(arts)
	if err != nil {
		t.Fatal(err)
	}
	if st.Artifacts["file"] != 1 || st.Artifacts["folder"] != 1 {
		t.Errorf("artifacts by type = %v", st.Artifacts)
	}
}

// Export writes the summary and the turns, in JSON or Markdown by the
// file's extension.
func TestExport(t *testing.T) {
	r := newRig(t, nil)
	r.srv.Default(llmtest.Text("the answer"))
	r.send("the question")
	dir := t.TempDir()
	if _, err := r.agent.ExportFile(filepath.Join(dir, "c.json")); err != nil {
		t.Fatal(err)
	}
	var x Exported
	data, _ := os.ReadFile(filepath.Join(dir, "c.json"))
	if err := json.Unmarshal(data, &x); err != nil || len(x.Messages) != 2 || x.Messages[1].Text != "the answer" || x.Conversation != "chat" {
		t.Errorf("JSON export = %s, %v", data, err)
	}
	if _, err := r.agent.ExportFile(filepath.Join(dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "c.md"))
	if !strings.HasPrefix(string(md), "# Conversation chat") || !strings.Contains(string(md), "the question") {
		t.Errorf("Markdown export:\n%s", md)
	}
	if fi, err := os.Stat(filepath.Join(dir, "c.md")); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("export mode %v", fi.Mode().Perm())
	}
	if _, err := r.agent.ExportFile(filepath.Join(dir, "c.txt")); err == nil || !strings.Contains(err.Error(), ".json or .md") {
		t.Errorf("export to .txt: %v", err)
	}
}

// A running agent sees a prune another process made.
func TestPruneByAnotherProcess(t *testing.T) {
	r := newRig(t, nil)
	r.srv.Default(llmtest.Text("ok"))
	r.send("old chatter about lunch " + strings.Repeat("blah ", 300))
	r.send("the real task")
	other := r.open()
	if n, err := other.Clear(); err != nil || n != 4 {
		t.Fatalf("Clear = %d, %v", n, err)
	}
	r.send("go on")
	if sent := sentTexts(r); containsText(sent, "lunch") || len(sent) != 1 {
		t.Errorf("the running agent still sends %q", sent)
	}
}
