package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The parsers below accept the shapes models actually send for the asked
// one (a bare list instead of the object, plain strings instead of
// {"text": ...}, "event" for "action") and refuse everything else with an
// error written to be sent back to the model.

// parseFacts reads an extraction reply.
func parseFacts(raw json.RawMessage) ([]Fact, error) {
	items, err := listField(raw, "facts")
	if err != nil {
		return nil, err
	}
	var out []Fact
	for i, it := range items {
		f, err := parseFact(it)
		if err != nil {
			return nil, fmt.Errorf("facts[%d]: %w", i, err)
		}
		out = append(out, f)
	}
	if len(out) > MaxFacts {
		return nil, fmt.Errorf("%d facts: give at most %d, the most lasting ones", len(out), MaxFacts)
	}
	return out, nil
}

func parseFact(raw json.RawMessage) (Fact, error) {
	var f Fact
	var s string
	if json.Unmarshal(raw, &s) == nil {
		f.Text = s
	} else {
		var obj struct {
			Text *string `json:"text"`
			Fact *string `json:"fact"`
			Kind string  `json:"kind"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return f, errors.New(`want an object {"text": "...", "kind": "..."}`)
		}
		switch {
		case obj.Text != nil:
			f.Text = *obj.Text
		case obj.Fact != nil:
			f.Text = *obj.Fact
		default:
			return f, errors.New(`"text" is missing`)
		}
		f.Kind = obj.Kind
	}
	f.Text = strings.Join(strings.Fields(f.Text), " ")
	if f.Text == "" {
		return f, errors.New(`"text" is empty: leave the fact out instead`)
	}
	kind, err := NormalizeKind(f.Kind)
	if err != nil {
		return f, err
	}
	f.Kind = kind
	return f, nil
}

// NormalizeKind maps a kind as a model may spell it ("Preference",
// "decisions", "") to one of Kinds, or explains why it cannot.
func NormalizeKind(kind string) (string, error) {
	k := strings.ToLower(strings.TrimSpace(kind))
	if k == "" {
		return Kinds[0], nil
	}
	if slices.Contains(Kinds, k) {
		return k, nil
	}
	if s, ok := strings.CutSuffix(k, "s"); ok && slices.Contains(Kinds, s) {
		return s, nil
	}
	return "", fmt.Errorf("unknown kind %q: use one of %s", kind, strings.Join(Kinds, ", "))
}

// listField returns the elements of the list under key in an object reply,
// or of a reply that is a bare list. A reply without the key is refused:
// taking it for an empty list would lose the facts silently.
func listField(raw json.RawMessage, key string) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	want := fmt.Sprintf(`reply with a JSON object {"%s": [...]}`, key)
	if len(raw) > 0 && raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s: %v", want, err)
		}
		return items, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New(want)
	}
	v, ok := obj[key]
	if !ok {
		return nil, fmt.Errorf("%q is missing: %s", key, want)
	}
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, fmt.Errorf("%q is not a list: %s", key, want)
	}
	return items, nil
}

// Actions the model may decide, as it spells them.
const (
	actAdd    = "ADD"
	actUpdate = "UPDATE"
	actDelete = "DELETE"
	actNone   = "NONE"
)

// decision is one checked decision of a reconciliation reply, with the
// short ids mapped to indexes (fact into the batch's facts, memory into the
// listed memories, -1 for none).
type decision struct {
	fact   int
	action string
	memory int
	text   string
	reason string
}

// parseDecisions reads a reconciliation reply about nFacts facts (f1…) and
// nMems memories (m1…) and checks that every id is one it was given and
// every fact has a decision.
func parseDecisions(raw json.RawMessage, nFacts, nMems int) ([]decision, error) {
	items, err := listField(raw, "decisions")
	if err != nil {
		return nil, err
	}
	var out []decision
	covered := make([]bool, nFacts)
	for i, it := range items {
		var d struct {
			Fact   json.RawMessage `json:"fact"`
			Action string          `json:"action"`
			Event  string          `json:"event"`
			Memory json.RawMessage `json:"memory"`
			Text   string          `json:"text"`
			Reason string          `json:"reason"`
		}
		if err := json.Unmarshal(it, &d); err != nil {
			return nil, fmt.Errorf(`decisions[%d]: want an object {"fact": "f1", "action": "ADD", ...}`, i)
		}
		fi, err := shortID(d.Fact, "f", nFacts)
		if err != nil {
			return nil, fmt.Errorf("decisions[%d]: fact: %w", i, err)
		}
		if fi < 0 {
			return nil, fmt.Errorf(`decisions[%d]: "fact" is missing: name the new fact (f1 to f%d)`, i, nFacts)
		}
		act := strings.ToUpper(strings.TrimSpace(d.Action))
		if act == "" {
			act = strings.ToUpper(strings.TrimSpace(d.Event))
		}
		switch act {
		case actAdd, actUpdate, actDelete, actNone:
		case "":
			return nil, fmt.Errorf(`decisions[%d]: "action" is missing: use ADD, UPDATE, DELETE or NONE`, i)
		default:
			return nil, fmt.Errorf("decisions[%d]: unknown action %q: use ADD, UPDATE, DELETE or NONE", i, act)
		}
		mi, err := shortID(d.Memory, "m", nMems)
		if err != nil {
			return nil, fmt.Errorf("decisions[%d]: memory: %w", i, err)
		}
		if mi < 0 && (act == actUpdate || act == actDelete) {
			return nil, fmt.Errorf(`decisions[%d]: %s needs "memory": the id of the memory it changes (m1 to m%d)`, i, act, nMems)
		}
		if act == actAdd {
			mi = -1
		}
		covered[fi] = true
		out = append(out, decision{fact: fi, action: act, memory: mi,
			text: strings.Join(strings.Fields(d.Text), " "), reason: strings.TrimSpace(d.Reason)})
	}
	var missing []string
	for i, ok := range covered {
		if !ok {
			missing = append(missing, "f"+strconv.Itoa(i+1))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no decision for %s: every new fact needs at least one", strings.Join(missing, ", "))
	}
	return out, nil
}

// shortID reads an id such as "m2" (also "M2", "[m2]", or the bare number
// 2) naming one of n items with the given prefix, and returns its index;
// -1 when it is absent or empty.
func shortID(raw json.RawMessage, prefix string, n int) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return -1, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var num json.Number
		if json.Unmarshal(raw, &num) != nil {
			return 0, fmt.Errorf("want an id such as %q", prefix+"1")
		}
		s = num.String()
	}
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), "[]()\"'"))
	if s == "" {
		return -1, nil
	}
	num := strings.TrimPrefix(s, prefix)
	i, err := strconv.Atoi(num)
	if err != nil || i < 1 || i > n {
		if n == 0 {
			return 0, fmt.Errorf("unknown id %q: there are none", s)
		}
		return 0, fmt.Errorf("unknown id %q: use %s1 to %s%d", s, prefix, prefix, n)
	}
	return i - 1, nil
}
