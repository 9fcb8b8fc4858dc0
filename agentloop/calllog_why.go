package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Verdicts of a Finding: what became of a memory in a message's context.
const (
	// VerdictIncluded: the model was shown it.
	VerdictIncluded = "included"
	// VerdictExcluded: the planner had it and left it out (Reason says
	// why: over budget, max items, duplicate of…).
	VerdictExcluded = "excluded"
	// VerdictDropped: recall returned it, but it went to no plan (a turn
	// of the conversation, which is sent as messages).
	VerdictDropped = "dropped"
	// VerdictNotRetrieved: recall did not return it, and the standing
	// context did not hold it.
	VerdictNotRetrieved = "not retrieved"
	// VerdictNoRecall: nothing was recalled for the message at all.
	VerdictNoRecall = "no recall"
)

// WhyTurn is the plan of one message and what became of the memories
// asked about in it.
type WhyTurn struct {
	// Record is the message's first call record; the others differ in
	// the conversation that followed, not in the plans.
	Record CallRecord `json:"record"`
	// Steps is the number of calls recorded for the message.
	Steps int `json:"steps"`
	// Findings say, for each memory asked about, what became of it.
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is what became of one memory in one message's context.
type Finding struct {
	ID    string `json:"id"`
	Kind  string `json:"kind,omitempty"`
	Title string `json:"title,omitempty"`
	// Verdict is one of the Verdict constants.
	Verdict string `json:"verdict"`
	// Rank and Score place it in what recall returned (Rank 0: not
	// returned).
	Rank  int      `json:"rank,omitempty"`
	Score *float64 `json:"score,omitempty"`
	// Part, Reason and Tokens are the planner's: the plan it was in, why
	// it was in or out, and what it cost or would have cost.
	Part   string `json:"part,omitempty"`
	Reason string `json:"reason,omitempty"`
	Tokens int    `json:"tokens,omitempty"`
}

// WhyAnswer answers "why did the agent (not) know X": the messages named
// and, for each, what became of the memories that match X.
type WhyAnswer struct {
	// Turn and About are the question's two parts, as given.
	Turn  string `json:"turn"`
	About string `json:"about,omitempty"`
	// Matched are the memories About matched, in the store or in the
	// records; empty when About is.
	Matched []Finding `json:"matched,omitempty"`
	// Turns are the messages named, oldest first.
	Turns []WhyTurn `json:"turns"`
	// More counts the messages named beyond those in Turns.
	More int `json:"more,omitempty"`
}

// whyTurns bounds the messages one answer shows.
const whyTurns = 10

// whyCandidates bounds the memories a text of About is searched for in
// the store.
const whyCandidates = 20

// ErrNoRecord is wrapped by Why's error when no call record is kept for
// the turn asked about.
var ErrNoRecord = errors.New("no call record")

// Why answers what the model was shown in the messages turn names and,
// when about is given, what became of the memories about names there:
// retrieved or not, at which rank and score, included or left out and
// why. turn is "last", the id of a call record, or of a user or assistant
// turn, a day (2026-11-24, today, yesterday, or a weekday for the last
// one), or words of the user's message. about is a memory id or words of
// its text.
func (a *Agent) Why(ctx context.Context, turn, about string) (*WhyAnswer, error) {
	if a.cfg.CallLog == nil {
		return nil, fmt.Errorf("%w: call records are off (--no-plan-log or agent.plan_log: false)", ErrNoRecord)
	}
	turn, about = strings.TrimSpace(turn), strings.TrimSpace(about)
	if turn == "" {
		return nil, errors.New(`name the message: "last", a turn or plan id, a day, or words of the message`)
	}
	lines, err := a.cfg.CallLog.ReadCalls(a.cfg.Conversation, a.cfg.Warn)
	if err != nil {
		return nil, fmt.Errorf("read call records: %w", err)
	}
	msgs := groupRecords(lines, a.cfg.Warn)
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w in conversation %s yet", ErrNoRecord, a.cfg.Conversation)
	}
	picked, err := pickMessages(msgs, turn, a.now())
	if err != nil {
		return nil, err
	}
	ans := &WhyAnswer{Turn: turn, About: about}
	if n := len(picked); n > whyTurns {
		ans.More, picked = n-whyTurns, picked[n-whyTurns:]
	}
	var matched []Finding
	if about != "" {
		if matched, err = a.matchMemories(ctx, about, picked); err != nil {
			return nil, err
		}
		ans.Matched = matched
	}
	for _, m := range picked {
		wt := WhyTurn{Record: m[0], Steps: len(m)}
		for _, mm := range matched {
			wt.Findings = append(wt.Findings, findIn(&m[0], mm))
		}
		ans.Turns = append(ans.Turns, wt)
	}
	return ans, nil
}

// groupRecords decodes the records and groups them by message, in order.
func groupRecords(lines [][]byte, warn func(error)) [][]CallRecord {
	var out [][]CallRecord
	at := map[string]int{}
	for _, l := range lines {
		var r CallRecord
		if err := json.Unmarshal(l, &r); err != nil || r.ID == "" {
			if warn != nil {
				warn(fmt.Errorf("call record skipped: not a record (%.60s)", l))
			}
			continue
		}
		if i, ok := at[r.UserTurn]; ok && r.UserTurn != "" {
			out[i] = append(out[i], r)
			continue
		}
		at[r.UserTurn] = len(out)
		out = append(out, []CallRecord{r})
	}
	return out
}

// pickMessages returns the messages turn names (see Why), oldest first.
func pickMessages(msgs [][]CallRecord, turn string, now time.Time) ([][]CallRecord, error) {
	if strings.EqualFold(turn, "last") {
		return msgs[len(msgs)-1:], nil
	}
	for _, m := range msgs {
		for _, r := range m {
			if r.ID == turn || r.UserTurn == turn || r.Turn == turn {
				return [][]CallRecord{m}, nil
			}
		}
	}
	if day, ok := parseDay(turn, now); ok {
		var out [][]CallRecord
		for _, m := range msgs {
			if y, mo, d := m[0].Time.Local().Date(); y == day.Year() && mo == day.Month() && d == day.Day() {
				out = append(out, m)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%w for a message on %s", ErrNoRecord, day.Format("Monday 2006-01-02"))
		}
		return out, nil
	}
	words := strings.Fields(strings.ToLower(turn))
	var out [][]CallRecord
	for _, m := range msgs {
		if containsAll(strings.ToLower(m[0].Query), words) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w for %q: no recorded message has that id or day or those words", ErrNoRecord, turn)
	}
	return out, nil
}

// parseDay reads a day: YYYY-MM-DD, today, yesterday, or a weekday (the
// last one, today included), in local time.
func parseDay(s string, now time.Time) (time.Time, bool) {
	now = now.Local()
	switch strings.ToLower(s) {
	case "today":
		return now, true
	case "yesterday":
		return now.AddDate(0, 0, -1), true
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, true
	}
	for d := range 7 {
		day := now.AddDate(0, 0, -d)
		if strings.EqualFold(day.Weekday().String(), s) || strings.EqualFold(day.Weekday().String()[:3], s) {
			return day, true
		}
	}
	return time.Time{}, false
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return len(words) > 0
}

// matchMemories finds the memories about names: by id (or a prefix of
// six characters or more) among the records' candidates, else by its
// words in what recall returned and in the store.
func (a *Agent) matchMemories(ctx context.Context, about string, msgs [][]CallRecord) ([]Finding, error) {
	var out []Finding
	seen := map[string]bool{}
	add := func(f Finding) {
		if !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f)
		}
	}
	single := !strings.ContainsAny(about, " \t")
	for _, m := range msgs {
		r := &m[0]
		for _, x := range r.Retrieved {
			if single && idMatch(x.ID, about) {
				add(Finding{ID: x.ID, Kind: x.Kind, Title: x.Title})
			}
		}
		for _, e := range r.Entries {
			if single && idMatch(e.ID, about) {
				add(Finding{ID: e.ID, Kind: e.Kind})
			}
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	words := strings.Fields(strings.ToLower(about))
	for _, m := range msgs {
		for _, x := range m[0].Retrieved {
			if containsAll(strings.ToLower(x.Title), words) {
				add(Finding{ID: x.ID, Kind: x.Kind, Title: x.Title})
			}
		}
	}
	if a.cfg.Library != nil {
		recs, err := a.cfg.Library.Relevant(ctx, about, whyCandidates)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			a.cfg.Warn(fmt.Errorf("search the store for %q: %w", about, err))
		}
		for _, r := range recs {
			if containsAll(strings.ToLower(r.Text), words) || single && idMatch(r.ID, about) {
				add(Finding{ID: r.ID, Kind: r.Kind, Title: title(r.Text)})
			}
		}
	}
	if len(out) == 0 && single && looksLikeID(about) {
		// An id the store does not know: the records can still say it was
		// never there.
		add(Finding{ID: about})
	}
	return out, nil
}

// idMatch reports whether s names id: the id itself, or a prefix of it of
// six characters or more.
func idMatch(id, s string) bool {
	return id == s || len(s) >= 6 && strings.HasPrefix(id, s)
}

// findIn says what became of memory m in the message of record r.
func findIn(r *CallRecord, m Finding) Finding {
	f := Finding{ID: m.ID, Kind: m.Kind, Title: m.Title}
	for _, x := range r.Retrieved {
		if x.ID == m.ID {
			f.Rank, f.Score = x.Rank, x.Score
			if f.Title == "" {
				f.Title = x.Title
			}
			if f.Kind == "" {
				f.Kind = x.Kind
			}
		}
	}
	// The standing context goes first: a memory it showed was left out
	// of the recall plan for that.
	at := slices.IndexFunc(r.Entries, func(e PlanEntry) bool { return e.ID == m.ID && e.Included })
	if at < 0 {
		at = slices.IndexFunc(r.Entries, func(e PlanEntry) bool { return e.ID == m.ID })
	}
	switch {
	case at >= 0:
		e := r.Entries[at]
		f.Part, f.Reason, f.Tokens = e.Part, e.Reason, e.Tokens
		if f.Kind == "" {
			f.Kind = e.Kind
		}
		f.Verdict = VerdictExcluded
		if e.Included {
			f.Verdict = VerdictIncluded
		}
	case f.Rank > 0:
		f.Verdict, f.Reason = VerdictDropped, "a turn of the conversation, sent as messages"
	case !slices.ContainsFunc(r.Plans, func(p PlanRef) bool { return p.Part == PartRecall }) && len(r.Retrieved) == 0:
		f.Verdict = VerdictNoRecall
	default:
		f.Verdict = VerdictNotRetrieved
	}
	return f
}

// looksLikeID reports whether s could be a memory's id (a ULID, upper
// case with digits) rather than a word of its text.
func looksLikeID(s string) bool {
	return len(s) >= 6 && strings.ToUpper(s) == s && strings.ContainsAny(s, "0123456789")
}
