package agentloop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop/tools"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
	openai "github.com/sashabaranov/go-openai"
)

// BenchmarkCallRecord measures what recording adds to a message of two
// requests (one with two tool calls): the records built, encoded and
// appended to plans/calls/ in a real store directory, for a context of
// 12 standing items and 8 recalled memories and a buffer of 40 turns
// already counted. The rest of a message (the model, the tools, a git
// commit per turn) is not measured: it is the same with or without
// recording. bytes/record is the mean size of a record on disk.
func BenchmarkCallRecord(b *testing.B) {
	home := b.TempDir()
	m := mira.Detached(&mira.Config{}, home)
	tok, err := plan.NewTokenizer("")
	if err != nil {
		b.Fatal(err)
	}
	if err := tok.Load(); err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	rec := func(i int, kind, text string) mem.Record {
		s := 1.0 / float64(i+1)
		t := now.Add(-time.Duration(i) * time.Hour)
		return mem.Record{ID: fmt.Sprintf("01JBENCH%018d", i), Kind: kind, Scope: "global", Text: text, CreatedAt: &t, Score: &s}
	}
	var standing, recalled []plan.Item
	for i := range 12 {
		it := plan.FromRecord(rec(i, mem.KindTask, fmt.Sprintf("Task %d: keep the invoices in cents and round at the end, as decided.", i)))
		it.Auto = true
		standing = append(standing, it)
	}
	var retrieved []mem.Record
	for i := range 8 {
		r := rec(100+i, mem.KindDecision, fmt.Sprintf("Decision %d: sessions live in PostgreSQL. ", i)+strings.Repeat("Details of the decision and why it was made. ", 10*i))
		retrieved = append(retrieved, r)
		recalled = append(recalled, plan.Item{Record: r, Section: plan.SectionRetrieved})
	}
	sp, err := plan.Build(standing, plan.Options{Limits: plan.Limits{Budget: DefaultContextBudget}})
	if err != nil {
		b.Fatal(err)
	}
	rp, err := plan.Build(recalled, plan.Options{Query: "where are sessions stored", Limits: plan.Limits{Budget: 400, MaxItems: 12, CardLines: 3, MaxItemTokens: 400}})
	if err != nil {
		b.Fatal(err)
	}
	a := &Agent{
		cfg: Config{Conversation: "chat", CallLog: m, Instructions: DefaultInstructions, Now: func() time.Time { return now },
			Warn: func(err error) { b.Fatal(err) }},
		model: benchModel{}, tok: tok, tokens: map[string]int{}, standing: sp, recall: rp, retrieved: retrieved,
		instrTokens: -1, toolsTokens: -1,
	}
	for i := range 40 {
		a.buffer = append(a.buffer, &mem.Entry{ID: fmt.Sprintf("01JTURN%019d", i), Body: strings.Repeat("a line of the conversation ", 20)})
	}
	p := &prompt{standing: a.standingText(sp), recall: rp.Prompt()}
	user := &mem.Entry{ID: "01JUSER0000000000000000000", Body: "where are sessions stored, and why there?"}
	req := openai.ChatCompletionRequest{Messages: make([]openai.ChatCompletionMessage, 44), Tools: []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "read_file", Description: strings.Repeat("Reads a file. ", 40)}}}}
	reply := &llm.Reply{Usage: llm.Usage{Requests: 1, PromptTokens: 9000, CachedTokens: 8000, CompletionTokens: 120}}
	calls := []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "edit_file"}}, {ID: "c2", Function: openai.FunctionCall{Name: "bash"}}}
	b.ReportAllocs()
	for b.Loop() {
		r := a.newRecorder(p, user)
		for _, c := range calls {
			r.tool(c, tools.Result{}, false)
		}
		r.write(1, req, reply, "01JASSIST000000000000000001", nil)
		r.write(2, req, reply, "01JASSIST000000000000000002", nil)
	}
	b.StopTimer()
	fi, err := os.Stat(filepath.Join(home, "plans", "calls", "chat.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	lines, err := m.ReadCalls("chat", nil)
	if err != nil || len(lines) == 0 {
		b.Fatal(err)
	}
	var n int
	for _, l := range lines {
		n += len(l) + 1
	}
	_ = fi
	b.ReportMetric(float64(n)/float64(len(lines)), "bytes/record")
}

type benchModel struct{}

func (benchModel) Model() string { return "bench-model" }
func (benchModel) Stream(ctx context.Context, req openai.ChatCompletionRequest, on func(llm.Event)) (*llm.Reply, error) {
	return nil, nil
}
