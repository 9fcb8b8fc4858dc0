package ctx

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/mem"
)

// refEntry is the part of an entry the reference decides.
type refEntry struct{ ID, Reason string }

// refPlan is a slow planner written to be obviously right rather than
// fast. It follows the rules of Build's documentation one by one and, for
// every budget decision, renders the whole prompt and counts it, assuming
// nothing about how token counts add up. It shares with Build only the
// rendering of single items and the canonical form of a record. It does not
// model pins that overflow the budget: then it reports ok == false.
func refPlan(t *testing.T, items []Item, opt Options) (included, excluded []refEntry, prompt string, ok bool) {
	t.Helper()
	mode := opt.Mode
	if mode == "" {
		mode = ModeLight
	}
	lim := opt.Limits
	if lim == (Limits{}) {
		lim = mode.Defaults()
	}
	enc := mustTokenizer(t, opt.Encoding)
	drawer := &planner{opt: Options{Mode: mode, Query: opt.Query}, lim: lim, enc: enc}

	type rc struct {
		c      *cand
		reason string
		in     bool
	}
	var all []*rc
	for _, it := range items {
		c := &cand{it: it, label: it.Record.ID, text: cleanText(it.Record.Text)}
		if c.label == "" {
			c.label = AdHoc(it.Record.Text).Record.ID
		}
		key, err := json.Marshal(struct {
			Record  mem.Record `json:"record"`
			Section Section    `json:"section"`
			Atom    string     `json:"atom"`
			Auto    bool       `json:"auto"`
		}{it.Record, it.Section, it.Atom, it.Auto})
		if err != nil {
			t.Fatal(err)
		}
		c.key = string(key)
		c.block = drawer.draw(c)
		c.tokens = enc.Count(c.block)
		drawer.fitCap(c)
		all = append(all, &rc{c: c})
	}

	// Rule 1: rank.
	secIndex := func(s Section) int { return slices.Index(sections, s) }
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].c, all[j].c
		if x, y := secIndex(a.it.Section), secIndex(b.it.Section); x != y {
			return x < y
		}
		if x, y := a.leased(), b.leased(); x != y {
			return y // sticky pins first
		}
		as, bs := a.it.Record.Score, b.it.Record.Score
		if (as == nil) != (bs == nil) {
			return as != nil
		}
		if as != nil && *as != *bs {
			return *as > *bs
		}
		at, bt := a.it.Record.CreatedAt, b.it.Record.CreatedAt
		if (at == nil) != (bt == nil) {
			return at != nil
		}
		if at != nil && !at.Equal(*bt) {
			return at.After(*bt)
		}
		if a.label != b.label {
			return a.label < b.label
		}
		if a.it.Record.Text != b.it.Record.Text {
			return a.it.Record.Text < b.it.Record.Text
		}
		return a.key < b.key
	})

	// Rule 2: filters, each item against the items ranked before it.
	for i, x := range all {
		r := x.c.it.Record
		pin := x.c.it.Section == SectionPins
		leased := pin && r.Pin == mem.PinLeased
		switch {
		case strings.TrimSpace(x.c.text) == "":
			x.reason = ReasonEmpty
		case r.DeletedAt != nil:
			x.reason = ReasonDeleted
		case r.ReplacedBy != "":
			x.reason = ReasonSuperseded + " " + r.ReplacedBy
		case leased && r.PinUntil != nil && r.PinUntil.Before(opt.Now):
			x.reason = ReasonExpiredPin
		case mode == ModeOff && (leased || (x.c.it.Auto && !pin)):
			x.reason = ReasonModeOff
		default:
			for _, y := range all[:i] {
				if y.reason != "" {
					continue
				}
				if y.c.label == x.c.label || strings.Join(strings.Fields(strings.ToLower(y.c.text)), " ") ==
					strings.Join(strings.Fields(strings.ToLower(x.c.text)), " ") {
					x.reason = ReasonDuplicate + " " + y.c.label
					break
				}
			}
		}
	}

	// Rule 3: units.
	var units [][]*rc
	for _, x := range all {
		if x.reason != "" {
			continue
		}
		at := -1
		for k, u := range units {
			if x.c.it.Atom != "" && u[0].c.it.Atom == x.c.it.Atom {
				at = k
			}
		}
		if at < 0 {
			units = append(units, []*rc{x})
		} else {
			units[at] = append(units[at], x)
		}
	}
	oldestFirst := func(a, b *cand) bool { return byTime(a, b) < 0 }
	render := func() string {
		var b strings.Builder
		for _, s := range sections {
			var read [][]*cand
			for _, u := range units {
				if u[0].in && u[0].c.it.Section == s {
					var ms []*cand
					for _, x := range u {
						ms = append(ms, x.c)
					}
					sort.SliceStable(ms, func(i, j int) bool { return oldestFirst(ms[i], ms[j]) })
					read = append(read, ms)
				}
			}
			if len(read) == 0 {
				continue
			}
			if s.stable() {
				sort.SliceStable(read, func(i, j int) bool { return oldestFirst(read[i][0], read[j][0]) })
			}
			if b.Len() == 0 {
				b.WriteString(preamble)
			}
			b.WriteString(headingBlock(s, opt.Query))
			for _, ms := range read {
				for _, c := range ms {
					b.WriteString(c.block)
				}
			}
		}
		return b.String()
	}
	set := func(u []*rc, in bool, reason string) {
		for _, x := range u {
			x.in, x.reason = in, reason
		}
	}

	// Rule 4: pins, all of them, or the reference gives up.
	for _, u := range units {
		if u[0].c.it.Section == SectionPins {
			set(u, true, ReasonPinned)
		}
	}
	if enc.Count(render()) > lim.Budget {
		return nil, nil, "", false
	}
	// Rule 5: the rest, each tried against the whole rendered prompt.
	n := 0
	for _, u := range units {
		if u[0].in {
			continue
		}
		best, scored := 0.0, false
		for _, x := range u {
			if s := x.c.it.Record.Score; s != nil {
				if !scored || *s > best {
					best = *s
				}
				scored = true
			}
		}
		switch {
		case scored && best < lim.ScoreThreshold:
			set(u, false, ReasonBelowThreshold)
		case lim.MaxItems > 0 && n+len(u) > lim.MaxItems:
			set(u, false, ReasonMaxItems)
		default:
			set(u, true, ReasonInBudget)
			if enc.Count(render()) > lim.Budget {
				set(u, false, ReasonOverBudget)
			} else {
				n += len(u)
			}
		}
	}

	prompt = render()
	for _, x := range all {
		if !x.in {
			excluded = append(excluded, refEntry{x.c.label, x.reason})
		}
	}
	for _, line := range strings.Split(prompt, "\n") {
		if strings.HasPrefix(line, "### ") {
			id := strings.Split(line, " · ")[1]
			for _, x := range all {
				if x.in && x.c.label == id && !slices.Contains(included, refEntry{id, x.reason}) {
					included = append(included, refEntry{id, x.reason})
					break
				}
			}
		}
	}
	return included, excluded, prompt, true
}

func planEntries(list []Entry) []refEntry {
	var out []refEntry
	for _, e := range list {
		out = append(out, refEntry{e.ID, e.Reason})
	}
	return out
}

// TestAgainstReference compares Build with refPlan on random candidates,
// budgets and options: both must make the same decisions, for the same
// reasons, and render the same bytes.
func TestAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := 400
	if testing.Short() {
		cases = 60
	}
	compared := 0
	for i := range cases {
		items := randItems(r, 1+r.IntN(24))
		opt := randOptions(r)
		p := build(t, items, opt)
		checkPlan(t, items, opt, p)
		in, out, prompt, ok := refPlan(t, items, opt)
		if !ok {
			continue
		}
		compared++
		if diff := cmp.Diff(in, planEntries(p.Included)); diff != "" {
			t.Fatalf("case %d: included differs (-reference +Build):\n%s", i, diff)
		}
		if diff := cmp.Diff(out, planEntries(p.Excluded)); diff != "" {
			t.Fatalf("case %d: excluded differs (-reference +Build):\n%s", i, diff)
		}
		if prompt != p.Prompt() {
			t.Fatalf("case %d: prompt differs:\n%s", i, cmp.Diff(prompt, p.Prompt()))
		}
	}
	if compared < cases*3/4 {
		t.Fatalf("only %d of %d cases compared: the generator makes too many oversized pins", compared, cases)
	}
	t.Logf("%d of %d cases compared", compared, cases)
}
