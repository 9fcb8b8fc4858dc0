package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/internal/text"
)

// WriteCallRecord prints a call record for a person: the plans, what was
// in and what was out and why, the tokens estimated and reported, and
// what came of the tool calls.
func WriteCallRecord(w io.Writer, r *agentloop.CallRecord) {
	fmt.Fprintf(w, "plan %s · conversation %s · step %d · %s · model %s · mode %s\n",
		r.ID, r.Conversation, r.Step, r.Time.Local().Format(time.DateTime), r.Model, r.Mode)
	fmt.Fprintf(w, "message   %s %q\n", r.UserTurn, r.Query)
	if r.Turn != "" {
		fmt.Fprintf(w, "reply     %s\n", r.Turn)
	}
	var plans []string
	for _, p := range r.Plans {
		plans = append(plans, fmt.Sprintf("%s %s (%s of %s tokens)", p.Part, p.ID, text.Thousands(p.Used), text.Thousands(p.Budget)))
	}
	if len(plans) == 0 {
		plans = []string{"none"}
	}
	fmt.Fprintf(w, "plans     %s\n", strings.Join(plans, " · "))
	ranks := map[string]agentloop.Retrieved{}
	for _, x := range r.Retrieved {
		ranks[x.ID] = x
	}
	planned := map[string]bool{}
	for _, in := range []bool{true, false} {
		var rows []agentloop.PlanEntry
		for _, e := range r.Entries {
			planned[e.ID] = true
			if e.Included == in {
				rows = append(rows, e)
			}
		}
		head := "in"
		if !in {
			head = "out"
		}
		fmt.Fprintf(w, "\n%s (%d):\n", head, len(rows))
		for _, e := range rows {
			line := fmt.Sprintf("  %-8s  %-22s %6s tok  %s %s", e.Part, e.Reason, text.Thousands(e.Tokens), e.Kind, e.ID)
			if x, ok := ranks[e.ID]; ok {
				line += fmt.Sprintf("  retrieved #%d", x.Rank)
				if x.Score != nil {
					line += fmt.Sprintf(" score %.3g", *x.Score)
				}
				if x.Title != "" {
					line += fmt.Sprintf("  %q", x.Title)
				}
			}
			if e.Path != "" {
				line += fmt.Sprintf("  %s:%d", e.Path, e.Line)
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	var dropped []agentloop.Retrieved
	for _, x := range r.Retrieved {
		if !planned[x.ID] {
			dropped = append(dropped, x)
		}
	}
	if len(dropped) > 0 {
		fmt.Fprintf(w, "\nretrieved, not planned (conversation turns, sent as messages):\n")
		for _, x := range dropped {
			fmt.Fprintf(w, "  #%d %s %s  %q\n", x.Rank, x.Kind, x.ID, x.Title)
		}
	}
	e := r.Estimated
	fmt.Fprintf(w, "\ntokens    estimated %s (instructions %s, tools %s, standing %s, recall %s, conversation %s; %d messages)\n",
		text.Thousands(e.Total), text.Thousands(e.Instructions), text.Thousands(e.Tools), text.Thousands(e.Standing), text.Thousands(e.Recall), text.Thousands(e.Conversation), e.Messages)
	if u := r.Reported; u != nil {
		fmt.Fprintf(w, "          reported  %s prompt (%s cached) · %s completion", text.Thousands(u.PromptTokens), text.Thousands(u.CachedTokens), text.Thousands(u.CompletionTokens))
		if u.ReasoningTokens > 0 {
			fmt.Fprintf(w, " (%s thinking)", text.Thousands(u.ReasoningTokens))
		}
		if e.Total > 0 && u.PromptTokens > 0 {
			fmt.Fprintf(w, " · estimate off by %+.0f%%", 100*float64(e.Total-u.PromptTokens)/float64(u.PromptTokens))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "          reported  nothing (the server sent no usage)")
	}
	if len(r.ToolCalls) > 0 {
		fmt.Fprintf(w, "\ntool calls (%d):\n", len(r.ToolCalls))
		for _, c := range r.ToolCalls {
			line := fmt.Sprintf("  %-14s %-12s %s", c.Tool, c.Outcome, c.ID)
			if c.Edit != "" {
				line += "  edit " + c.Edit
			}
			fmt.Fprintln(w, line)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(w, "\nerror     %s\n", r.Error)
	}
}
