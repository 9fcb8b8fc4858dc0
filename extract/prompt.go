package extract

import (
	"fmt"
	"strings"
	"time"
)

// factsPrompt is the system prompt of extraction. It is short and shows the
// exact reply shape with examples, because small local models follow
// examples better than rules.
const factsPrompt = `You pick out what is worth remembering, for months, from one message a user sent to an assistant.

Reply with JSON only, in this shape:
{"facts":[{"text":"...","kind":"fact"}]}

Rules:
- At most 3 facts. Reply {"facts":[]} when the message holds nothing lasting: greetings, thanks, questions, one-off requests.
- A fact is one short statement that makes sense on its own, without the conversation. Name who or what it is about ("The user", a person, a project by name); never "I", "you", "he", "it" or "this".
- Keep names, numbers and places as written. Turn relative dates ("yesterday", "next week") into dates, using the date of the message. Add nothing the message does not say.
- kind is one of: fact (the default), preference (likes, dislikes, habits, style), decision (a choice that was made), correction (something said or assumed earlier was wrong), goal (something the user wants to achieve), task (something to be done).
- The assistant's previous message may be shown for context. Take facts only from the user's message.

Examples:

Message: My wife Anne and I moved to Berlin last month.
{"facts":[{"text":"The user's wife is named Anne.","kind":"fact"},{"text":"The user lives in Berlin.","kind":"fact"}]}

Message: We'll go with PostgreSQL for the shop. And please always indent with tabs.
{"facts":[{"text":"The shop project uses PostgreSQL.","kind":"decision"},{"text":"The user wants code indented with tabs.","kind":"preference"}]}

Message: Thanks, that fixed it!
{"facts":[]}`

// factsMessage is the user message of one extraction call.
func factsMessage(text, prev string, when time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Date of the message: %s\n\n", when.UTC().Format("2006-01-02"))
	if prev = strings.TrimSpace(prev); prev != "" {
		if r := []rune(prev); len(r) > contextChars {
			prev = string(r[:contextChars]) + " …"
		}
		b.WriteString("The assistant's previous message (context only, take no facts from it):\n")
		b.WriteString(prev)
		b.WriteString("\n\n")
	}
	b.WriteString("Message:\n")
	b.WriteString(strings.TrimSpace(text))
	return b.String()
}

// reconcilePrompt is the system prompt of reconciliation.
const reconcilePrompt = `You keep a long-term memory consistent. You get new facts, with ids f1, f2, ..., and the existing memories closest to them, with ids m1, m2, ....

Decide for every new fact:
- ADD: it is new; no memory says it.
- NONE: a memory already says the same. Give that memory's id in "memory". Nothing is stored.
- UPDATE: it is about the same thing as a memory and is newer or more precise (the user moved, a number changed, details were added). Give the memory's id in "memory" and, in "text", the one statement that should replace it.
- DELETE: it shows that a memory is no longer true, without being a new value of the same thing (for example "The user sold the Tesla" against "The user drives a Tesla"). Give the memory's id in "memory" and a short "reason". The new fact is stored as well.

Reply with JSON only, in this shape:
{"decisions":[{"fact":"f1","action":"ADD"},{"fact":"f2","action":"UPDATE","memory":"m1","text":"...","reason":"..."}]}

Rules:
- Every new fact gets at least one decision. A fact may get several, for example UPDATE one memory and DELETE another.
- Use only the ids listed. Leave out memories that have nothing to do with a fact: they stay as they are.
- When unsure, ADD.

Example:

New facts:
f1 (fact): The user lives in Berlin.
f2 (fact): The user sold the Tesla.
f3 (fact): The user has a dog named Rex.
f4 (fact): The user's sister is named Clara.

Existing memories:
m1 (fact): The user lives in Paris.
m2 (fact): The user drives a Tesla.
m3 (fact): The user has a dog called Rex.
m4 (preference): The user likes hiking.

{"decisions":[{"fact":"f1","action":"UPDATE","memory":"m1","text":"The user lives in Berlin.","reason":"the user moved"},{"fact":"f2","action":"DELETE","memory":"m2","reason":"the user sold the Tesla"},{"fact":"f3","action":"NONE","memory":"m3"},{"fact":"f4","action":"ADD"}]}`

// reconcileMessage is the user message of one reconciliation call.
func reconcileMessage(facts []Fact, mems []Memory) string {
	var b strings.Builder
	b.WriteString("New facts:\n")
	for i, f := range facts {
		fmt.Fprintf(&b, "f%d (%s): %s\n", i+1, f.Kind, oneLine(f.Text))
	}
	b.WriteString("\nExisting memories:\n")
	for i, m := range mems {
		kind := m.Kind
		if kind == "" {
			kind = Kinds[0]
		}
		fmt.Fprintf(&b, "m%d (%s): %s\n", i+1, kind, oneLine(m.Text))
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine keeps a listed memory on its line, so that ids and texts cannot
// be confused; long memories are cut, since only their gist matters here.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 400 {
		s = string(r[:400]) + " …"
	}
	return s
}
