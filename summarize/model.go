package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/miramem/mira/internal/secret"
)

// Model is a chat model that writes summaries: any OpenAI-compatible
// client that can complete one system and one user message. Model returns
// the name recorded in the summaries' front matter and commit trailers.
type Model interface {
	Model() string
	Complete(ctx context.Context, system, user string) (string, error)
}

// task is one summary to write.
type task struct {
	level    string // L1, L2 or L3
	detail   Detail
	previous string // the previous rolling summary (L3 only)
	inputs   []unit
	target   int // tokens
}

// summarizer writes the text of a summary.
type summarizer interface {
	name() string
	summarize(ctx context.Context, t task) (string, error)
}

// extractive is the offline summarizer: it picks sentences.
type extractive struct{ count func(string) int }

func (extractive) name() string { return Extractive }

func (x extractive) summarize(_ context.Context, t task) (string, error) {
	units := t.inputs
	if t.level != "L1" {
		// The inputs are summaries: one unit per line keeps each line's
		// speaker with it.
		units = nil
		for _, u := range t.inputs {
			units = append(units, summaryUnits(u.text)...)
		}
	}
	if t.previous != "" {
		units = append(summaryUnits(t.previous), units...)
	}
	out := extract(units, t.target, x.count)
	if strings.TrimSpace(out) == "" {
		return "", errors.New("nothing to summarize: the material has no text")
	}
	return out, nil
}

// summaryUnits turns a summary's text back into units, one per line, so
// that its "- user: …" labels survive being summarized again.
func summaryUnits(text string) []unit {
	var out []unit
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*•"))
		if line == "" {
			continue
		}
		u := unit{text: line}
		if l, rest, ok := strings.Cut(line, ": "); ok && isLabel(l) {
			u = unit{label: l, text: rest}
		}
		out = append(out, u)
	}
	return out
}

func isLabel(s string) bool {
	switch s {
	case "user", "assistant", "tool", "fact":
		return true
	}
	return false
}

// llm writes summaries with a chat model. A summary in which the secret
// scan finds a credential that none of its inputs holds (the model made
// one up, or rebuilt one from pieces) is not written: the extractive
// summary of the same material takes its place, and warn says so.
type llm struct {
	m        Model
	fallback summarizer
	warn     func(error)
}

func (l llm) name() string { return l.m.Model() }

const rules = `Keep what a reader needs later: facts, decisions and their reasons, preferences, corrections, names, numbers, file paths, commands, open questions and unfinished tasks. Drop greetings, filler and anything repeated. Write plain text in the third person ("the user", "the assistant"), with no title, preamble or closing remark.`

func (l llm) summarize(ctx context.Context, t task) (string, error) {
	words := max(10, t.target*3/4)
	var system string
	switch {
	case t.level == "L3":
		system = fmt.Sprintf("You maintain the running summary of a long conversation between a user and a coding assistant. Rewrite the previous summary so that it also covers the new summaries, oldest first, that follow it. Keep what still matters from the previous summary; newer information replaces older information it contradicts. %s At most about %d words.", rules, words)
	case t.level == "L2":
		system = fmt.Sprintf("Below are summaries of consecutive parts of a conversation between a user and a coding assistant, oldest first. Merge them into one summary that reads as a single narrative. %s At most about %d words.", rules, words)
	case t.detail == DetailBrief:
		system = fmt.Sprintf("Summarize the conversation excerpt below between a user and a coding assistant in one or two sentences. %s At most about %d words.", rules, words)
	case t.detail == DetailStandard:
		system = fmt.Sprintf("Summarize the conversation excerpt below between a user and a coding assistant in one paragraph. %s At most about %d words.", rules, words)
	default:
		system = fmt.Sprintf("Summarize this part of a longer conversation between a user and a coding assistant. It will be combined with summaries of the other parts. %s At most about %d words.", rules, words)
	}
	var b strings.Builder
	if t.previous != "" {
		b.WriteString("<previous_summary>\n" + t.previous + "\n</previous_summary>\n\n")
	}
	tag := "conversation"
	if t.level != "L1" {
		tag = "summaries"
	}
	b.WriteString("<" + tag + ">\n")
	for i, u := range t.inputs {
		if i > 0 && t.level != "L1" {
			b.WriteString("\n---\n")
		}
		if u.at != "" {
			b.WriteString("[" + u.at + "] ")
		}
		if u.label != "" {
			b.WriteString(u.label + ": ")
		}
		b.WriteString(u.text)
		b.WriteByte('\n')
	}
	b.WriteString("</" + tag + ">")
	out, err := l.m.Complete(ctx, system, b.String())
	if err != nil {
		return "", fmt.Errorf("model %s: %w", l.m.Model(), err)
	}
	out = cleanReply(out)
	if out == "" {
		return "", fmt.Errorf("model %s returned an empty summary", l.m.Model())
	}
	if found := newSecrets(out, t); len(found) > 0 && l.fallback != nil {
		if l.warn != nil {
			l.warn(fmt.Errorf("model %s wrote a summary holding what looks like a secret (%s); the extractive summary is kept instead", l.m.Model(), found[0]))
		}
		return l.fallback.summarize(ctx, t)
	}
	return out, nil
}

// cleanReply strips what chat models tend to wrap a plain answer in: code
// fences and a "Summary:" heading.
func cleanReply(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		} else {
			s = ""
		}
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	s = strings.TrimSpace(s)
	for _, p := range []string{"Summary:", "**Summary:**", "# Summary", "## Summary"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			s = strings.TrimSpace(s[len(p):])
		}
	}
	return s
}

// newSecrets is what the secret scan finds in a summary and in none of
// the texts it summarizes. A secret the user chose to keep (stored with
// --allow-secret, or written by hand) may be carried on; a new one may not.
func newSecrets(summary string, t task) []secret.Finding {
	found := secret.Scan(summary)
	if len(found) == 0 {
		return nil
	}
	known := map[string]bool{}
	for _, f := range secret.Scan(t.previous) {
		known[f.Redacted] = true
	}
	for _, u := range t.inputs {
		for _, f := range secret.Scan(u.text) {
			known[f.Redacted] = true
		}
	}
	var out []secret.Finding
	for _, f := range found {
		if !known[f.Redacted] {
			out = append(out, f)
		}
	}
	return out
}
