package agentloop

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/miramem/mira/llm"
)

// Reasoning effort levels, from least to most thinking.
const (
	EffortNone   = "none"
	EffortLow    = "low"
	EffortMedium = "medium"
	EffortHigh   = "high"
)

// EffortAuto asks for the effort to be chosen per message by
// ClassifyEffort.
const EffortAuto = "auto"

// Efforts lists the levels ClassifyEffort returns, in order.
var Efforts = []string{EffortNone, EffortLow, EffortMedium, EffortHigh}

// ParseEffort checks an effort setting: auto (or empty), none, low, medium
// or high.
func ParseEffort(s string) (string, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "", EffortAuto:
		return EffortAuto, nil
	case EffortNone, EffortLow, EffortMedium, EffortHigh:
		return s, nil
	}
	return "", fmt.Errorf("unknown reasoning effort %q (want auto, none, low, medium or high)", s)
}

// Words that tell how much thinking a request needs. A request is read as
// lower-case words; the strongest signal found decides.
var (
	// highWords ask for design, hard debugging or changes across a code
	// base.
	highWords = []string{
		"refactor", "redesign", "architecture", "architect", "design", "deadlock", "race", "concurrency",
		"migrate", "migration", "rewrite", "optimize", "optimise", "performance", "security", "vulnerability",
		"investigate", "root", "why", "prove", "tradeoff", "tradeoffs", "trade-off", "plan", "strategy",
		"flaky", "intermittent", "leak", "corrupt", "corruption",
	}
	// mediumWords ask for understanding or ordinary edits.
	mediumWords = []string{
		"fix", "bug", "implement", "add", "change", "update", "write", "test", "tests", "explain", "how",
		"understand", "does", "mean", "means",
		"review", "debug", "error", "fails", "failing", "broken", "improve", "rename", "support", "handle",
	}
	// lowWords ask to find or look at something.
	lowWords = []string{
		"find", "where", "search", "grep", "list", "locate", "which", "look", "open", "read", "cat",
		"show", "print", "run", "status", "diff", "log",
	}
	// noneWords are acknowledgements and small talk.
	noneWords = []string{
		"thanks", "thank", "ok", "okay", "yes", "no", "hi", "hello", "hey", "great", "cool", "nice",
		"good", "sure", "bye", "continue", "go", "proceed",
	}
)

// ClassifyEffort chooses a reasoning effort for a user message by simple,
// deterministic rules, as a router in front of a reasoning model:
//
//   - high for design, refactoring, migrations, performance, security and
//     hard debugging ("why", "deadlock", "race", "flaky"), and for long
//     requests (over 120 words) or ones naming several files;
//   - medium for ordinary work: fixing, implementing, explaining, testing;
//   - low for short requests to find or show something ("where is",
//     "list", "read");
//   - none for acknowledgements and small talk ("thanks", "ok", "go on").
//
// A message matching nothing gets medium when it is longer than eight
// words and low otherwise.
func ClassifyEffort(text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' || r == '/')
	})
	if len(words) == 0 {
		return EffortNone
	}
	set := make(map[string]bool, len(words))
	files := 0
	for _, w := range words {
		w = strings.Trim(w, ".-_/")
		set[w] = true
		if looksLikeFile(w) {
			files++
		}
	}
	has := func(list []string) bool {
		for _, w := range list {
			if set[w] {
				return true
			}
		}
		return false
	}
	switch {
	case has(highWords) || len(words) > 120 || files >= 3:
		return EffortHigh
	case has(mediumWords):
		return EffortMedium
	case has(lowWords) && len(words) <= 12:
		return EffortLow
	case len(words) <= 4 && has(noneWords):
		return EffortNone
	case len(words) > 8:
		return EffortMedium
	}
	return EffortLow
}

// looksLikeFile reports whether a word names a file: a path with a slash
// or a name with a short extension.
func looksLikeFile(w string) bool {
	if strings.Contains(w, "/") && len(w) > 2 {
		return true
	}
	i := strings.LastIndexByte(w, '.')
	return i > 0 && len(w)-i-1 >= 1 && len(w)-i-1 <= 4 && !strings.ContainsAny(w[i+1:], "0123456789")
}

// EffortValue returns the reasoning_effort value to send to model for a
// level, or "" when nothing should be sent: the model does not take the
// parameter (llm.AcceptsEffort), or the level is empty. "none" is spelled
// as each family takes it: "none" for gpt-5.1 and later, "minimal" for
// the first gpt-5 models, and "low", the least they accept, for the
// o-series and gpt-oss.
func EffortValue(model, level string) string {
	if level == "" || level == EffortAuto || !llm.AcceptsEffort(model) {
		return ""
	}
	if level != EffortNone {
		return level
	}
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-5."), strings.HasPrefix(m, "gpt-6"):
		return "none"
	case strings.HasPrefix(m, "gpt-5"):
		return "minimal"
	}
	return EffortLow
}
