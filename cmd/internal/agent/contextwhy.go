package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/internal/text"
)

// ctxWhy runs /context why TURN [MEMORY…]: what the model was shown for
// the messages TURN names and, with MEMORY, what became of that memory
// there.
func (s *agentSession) ctxWhy(ctx context.Context, words []string) error {
	if len(words) == 0 {
		return cli.Usagef(`/context why needs a message: last, a turn or plan id, a day (2026-11-24, yesterday, tuesday) or words of the message in quotes, then optionally a memory id or words`)
	}
	ans, err := s.agent.Why(ctx, words[0], strings.Join(words[1:], " "))
	if errors.Is(err, agentloop.ErrNoRecord) {
		return &cli.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		return agentJSONLine(s.o, ans)
	}
	writeWhy(s.o.Out, ans)
	return nil
}

// writeWhy answers the question in a sentence per memory and message, the
// verdict first.
func writeWhy(w io.Writer, ans *agentloop.WhyAnswer) {
	if ans.About != "" && len(ans.Matched) == 0 {
		fmt.Fprintf(w, "No memory matches %q, in the store or in what was recalled.\n", ans.About)
	}
	if ans.More > 0 {
		fmt.Fprintf(w, "(%d older %s match %q; the newest %d follow)\n", ans.More, agentPlural(ans.More, "message", "messages"), ans.Turn, len(ans.Turns))
	}
	for i, t := range ans.Turns {
		r := &t.Record
		if ans.About == "" {
			if i > 0 {
				fmt.Fprintln(w)
			}
			cli.WriteCallRecord(w, r)
			continue
		}
		fmt.Fprintf(w, "%s %s · plan %s · %d %s · %q\n", r.Time.Local().Format("Mon 2006-01-02 15:04"), r.UserTurn, r.ID,
			t.Steps, agentPlural(t.Steps, "call", "calls"), r.Query)
		for _, f := range t.Findings {
			who := strings.TrimSpace(f.Kind + " " + f.ID)
			if f.Title != "" {
				who += fmt.Sprintf(" %q", f.Title)
			}
			fmt.Fprintf(w, "  %s\n    %s\n", who, whyLine(r, f))
		}
	}
}

// whyLine is the verdict on one memory in one message, with its evidence.
func whyLine(r *agentloop.CallRecord, f agentloop.Finding) string {
	got := ""
	if f.Rank > 0 {
		got = fmt.Sprintf("retrieved #%d of %d", f.Rank, len(r.Retrieved))
		if f.Score != nil {
			got += fmt.Sprintf(" (score %.3g)", *f.Score)
		}
	}
	switch f.Verdict {
	case agentloop.VerdictIncluded:
		s := fmt.Sprintf("SHOWN: in the %s context (%s, %s tokens)", f.Part, f.Reason, text.Thousands(f.Tokens))
		if got != "" {
			s += "; " + got
		}
		return s
	case agentloop.VerdictExcluded:
		s := fmt.Sprintf("NOT SHOWN: left out of the %s context: %s", f.Part, f.Reason)
		if f.Reason == "over budget" {
			for _, p := range r.Plans {
				if p.Part == f.Part {
					s += fmt.Sprintf(" (needed %s tokens; %s of the %s budget were used)", text.Thousands(f.Tokens), text.Thousands(p.Used), text.Thousands(p.Budget))
				}
			}
		}
		if got != "" {
			s += "; " + got
		}
		return s
	case agentloop.VerdictDropped:
		return "NOT SHOWN as a memory: " + got + ", but it is a turn of the conversation, sent as a message when still in the buffer"
	case agentloop.VerdictNoRecall:
		return "NOT SHOWN: nothing was recalled for this message (recall off, or context mode off)"
	}
	s := "NOT SHOWN: not retrieved"
	if n := len(r.Retrieved); n > 0 {
		s += fmt.Sprintf(": recall returned %d other %s", n, agentPlural(n, "memory", "memories"))
		if lo := r.Retrieved[n-1].Score; lo != nil {
			s += fmt.Sprintf(", the last scoring %.3g", *lo)
		}
		s += fmt.Sprintf(", for %q", r.Query)
	} else {
		s += ": recall returned nothing for the message"
	}
	return s
}
