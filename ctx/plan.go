package ctx

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/miramem/mira/mem"
)

// Version is the version of the planner's rules and output format. It is
// part of every plan id: a plan id names the same bytes only under the same
// version.
const Version = 2

// Reasons given in a plan. Every candidate is either included, with
// ReasonPinned or ReasonInBudget, or left out with one of the others.
// ReasonDuplicate and ReasonSuperseded are followed by a space and the id
// of the other item.
const (
	ReasonPinned         = "pinned"
	ReasonInBudget       = "in budget"
	ReasonOverBudget     = "over budget"
	ReasonMaxItems       = "max items"
	ReasonBelowThreshold = "below score threshold"
	ReasonDuplicate      = "duplicate of"
	ReasonSuperseded     = "superseded by"
	ReasonModeOff        = "mode off"
	ReasonExpiredPin     = "expired pin"
	ReasonDeleted        = "deleted"
	ReasonEmpty          = "empty"
	// ReasonMaxCode leaves out code cards beyond CodeCards.
	ReasonMaxCode = "max code cards"
	// ReasonMapLimit leaves out a code map larger than MapTokens.
	ReasonMapLimit = "over map limit"
)

// Forms of a code card in a plan: FormThin shows its signature, doc and
// place; FormExcerpt its excerpt or body too.
const (
	FormThin    = "thin"
	FormExcerpt = "excerpt"
)

// Options steer Build.
type Options struct {
	// Mode is the context mode; "" means ModeLight.
	Mode Mode
	// Limits bound the plan; the zero value means Mode.Defaults().
	Limits Limits
	// Encoding names the tiktoken encoding that counts tokens; "" means
	// DefaultEncoding.
	Encoding string
	// Query is what the memories were retrieved for. It is shown in the
	// heading of the retrieved section and is part of the plan id.
	Query string
	// Now decides which leased pins have expired; the zero time expires
	// none. It is not part of the plan id, but which pins expired is.
	Now time.Time
	// Turn is the number of the turn being planned, from 1; a pin leased
	// for turns (Item.UntilTurn) expires once Turn is past it. Zero
	// expires none. Like Now, only its effect is part of the plan id.
	Turn int
	// Closed reports whether a task is closed (or gone): a pin leased for
	// that task (Record.PinTask) has expired. Nil expires none.
	Closed func(id string) bool
}

// Entry is one candidate's line in a plan.
type Entry struct {
	// ID is the record's id; a record without one (plain text) gets
	// "text-" and a hash of its text, as AdHoc gives.
	ID      string  `json:"id"`
	Kind    string  `json:"kind,omitempty"`
	Section Section `json:"section"`
	// Tokens is the cost of the item's rendered block, or what it would
	// have cost for an item left out.
	Tokens int    `json:"tokens"`
	Reason string `json:"reason"`
	// Truncated says the block shows only the beginning of the item's
	// text (or card), and a note in the prompt says how much.
	Truncated bool     `json:"truncated"`
	Atom      string   `json:"atom,omitempty"`
	Score     *float64 `json:"score,omitempty"`
	// Path and Line place a code card; Form says how it is shown.
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	Form string `json:"form,omitempty"`
	// Pin is the kind of an item of the pins section: sticky, leased or
	// ephemeral (PinKinds).
	Pin string `json:"pin,omitempty"`
}

// Plan is a context plan: which candidates make up the context block and
// why, and the block itself. Identical inputs give identical plans, byte
// for byte, whatever the order of the items.
type Plan struct {
	// ID is a short hash of everything that determines the output: the
	// items, the options, the encoding and Version.
	ID       string `json:"plan_id"`
	Version  int    `json:"version"`
	Mode     Mode   `json:"mode"`
	Encoding string `json:"encoding"`
	Budget   int    `json:"budget"`
	// Used is the token count of the rendered prompt; never above Budget.
	Used int `json:"used"`
	// Overhead is the part of Used spent on the preamble and the section
	// headings; the rest is the included entries' Tokens.
	Overhead int    `json:"overhead"`
	Query    string `json:"query,omitempty"`
	Limits   Limits `json:"limits"`
	// Included lists the included candidates in the order they are
	// rendered; Excluded the others, most important first.
	Included []Entry `json:"included"`
	Excluded []Entry `json:"excluded"`
	// Warnings say what the budget forced that a user should know, such as
	// pins that had to be truncated or left out.
	Warnings []string `json:"warnings,omitempty"`

	prompt string
}

// cand is a candidate on its way through the planner.
type cand struct {
	it     Item
	pos    int    // index in rank order
	label  string // the id, or one derived from the text
	key    string // canonical JSON of the item: last tie-break, plan id input
	text   string // cleaned text
	head   string
	block  string
	tokens int
	trunc  bool
	reason string
	in     bool
	// A code card's forms: the full one (block, tokens) and the thin one
	// it falls back to; form is the one in block.
	thin       string
	thinTokens int
	form       string
}

func (c *cand) pin() bool    { return c.it.Section == SectionPins }
func (c *cand) code() bool   { return c.it.Section == SectionCode && c.it.Code != nil }
func (c *cand) whole() bool  { return c.code() || c.it.Section == SectionCodeMap }
func (c *cand) leased() bool { return c.pin() && c.it.Record.Pin == mem.PinLeased }

// pinKind is the kind of a pin: sticky, leased or ephemeral, ranked in
// that order; "" for an item that is none.
func (c *cand) pinKind() string {
	if !c.pin() {
		return ""
	}
	switch c.it.Record.Pin {
	case mem.PinLeased, PinEphemeral:
		return c.it.Record.Pin
	}
	return mem.PinSticky
}

// unit is an atom, or a single item without one: included or left out as
// a whole.
type unit struct {
	members []*cand // in priority order; members[0] leads
}

type planner struct {
	opt   Options
	lim   Limits
	enc   *Encoding
	cands []*cand // in priority order
	units []*unit // in priority order of their leads
	memo  map[string]int
	warn  []string
}

// Build plans the context block for items under opt. It fails only on
// invalid options or items; a budget too small for the pins is reported in
// the plan's warnings, and the output still stays within the budget.
//
// The rules, in order:
//
//  1. Items are ranked: by section (in the order of the Section
//     constants), sticky pins before leased ones and leased before
//     ephemeral, then by score (highest first; none last), creation time
//     (newest first; none last), id, text, and finally the whole record,
//     so that the input order never matters.
//  2. An item is left out if its text is empty, it is deleted, it was
//     replaced (superseded by its replaced_by), it is a pin whose lease is
//     over (past its pin_until, its pin_task closed, past its UntilTurn),
//     ModeOff excludes it (leased and ephemeral pins, and auto items other
//     than sticky pins), or an item ranked before it has the same id or the same
//     text up to case and spacing (duplicate).
//  3. The remaining items are grouped into units by atom; a unit takes the
//     place of its best-ranked member.
//  4. Units containing a pin are always included. One that does not fit in
//     what the budget leaves is truncated to fit (a single pin) or left out
//     (an atom), and a warning says so.
//  5. Every other unit, in rank order, is left out if none of its scored
//     members reaches the threshold, if it would take the count of
//     included non-pin items past MaxItems, or if its tokens (with the
//     preamble and its section's heading, when it is the first to need
//     them) exceed what is left of the budget; otherwise it is included. A
//     unit that does not fit does not stop smaller ones after it.
//
// Each item's cost is the token count of its rendered block: for a
// retrieved memory, a card of its first CardLines lines when CardLines is
// set (as it is in light mode); the whole text otherwise; truncated to
// MaxItemTokens, except for pins.
func Build(items []Item, opt Options) (*Plan, error) {
	mode, err := ParseMode(string(opt.Mode))
	if err != nil {
		return nil, err
	}
	opt.Mode = mode
	lim := opt.Limits
	if lim == (Limits{}) {
		lim = mode.Defaults()
	}
	if err := lim.validate(); err != nil {
		return nil, err
	}
	enc, err := NewTokenizer(opt.Encoding)
	if err != nil {
		return nil, err
	}
	// An empty plan needs no tokenizer: spare the load.
	if len(items) > 0 {
		if err := enc.Load(); err != nil {
			return nil, err
		}
	}
	opt.Encoding = enc.Name()
	p := &planner{opt: opt, lim: lim, enc: enc, memo: map[string]int{}}
	if err := p.candidates(items); err != nil {
		return nil, err
	}
	p.filter()
	p.prepare()
	p.group()
	p.choose()
	return p.plan(p.finish()), nil
}

// candidates wraps and ranks the items.
func (p *planner) candidates(items []Item) error {
	p.cands = make([]*cand, len(items))
	for i, it := range items {
		if it.Section.rank() < 0 {
			return fmt.Errorf("item %d (%s): unknown section %q", i+1, it.Record.ID, it.Section)
		}
		if (it.Section == SectionCode) != (it.Code != nil) {
			return fmt.Errorf("item %d (%s): a code card belongs in section %q, and only a code card", i+1, it.Record.ID, SectionCode)
		}
		key, err := itemKey(it)
		if err != nil {
			return fmt.Errorf("item %d (%s): %w", i+1, it.Record.ID, err)
		}
		c := &cand{it: it, key: key, label: it.Record.ID}
		if c.label == "" {
			c.label = AdHoc(it.Record.Text).Record.ID
		}
		p.cands[i] = c
	}
	slices.SortFunc(p.cands, byRank)
	for i, c := range p.cands {
		c.pos = i
	}
	return nil
}

// itemKey is the canonical JSON of an item.
func itemKey(it Item) (string, error) {
	key, err := json.Marshal(struct {
		Record  mem.Record `json:"record"`
		Section Section    `json:"section"`
		Atom    string     `json:"atom"`
		Auto    bool       `json:"auto"`
		Code    *Code      `json:"code,omitempty"`
		Until   int        `json:"until_turn,omitempty"`
	}{it.Record, it.Section, it.Atom, it.Auto, it.Code, it.UntilTurn})
	return string(key), err
}

// byRank is the planner's priority order (rule 1 of Build).
func byRank(a, b *cand) int {
	if c := cmp.Compare(a.it.Section.rank(), b.it.Section.rank()); c != 0 {
		return c
	}
	// A sticky pin outranks a leased one: when pins alone overflow the
	// budget, the standing instruction is the one kept.
	if c := cmp.Compare(pinRank(a.pinKind()), pinRank(b.pinKind())); c != 0 {
		return c
	}
	if c := cmpOpt(a.it.Record.Score, b.it.Record.Score, cmp.Compare[float64]); c != 0 {
		return -c
	}
	if c := cmpOpt(a.it.Record.CreatedAt, b.it.Record.CreatedAt, cmpTime); c != 0 {
		return -c
	}
	return cmp.Or(cmp.Compare(a.label, b.label), cmp.Compare(a.it.Record.Text, b.it.Record.Text), cmp.Compare(a.key, b.key))
}

// byTime is the reading order within a stable section and within an
// atom: oldest first (undated before dated), then as byRank.
func byTime(a, b *cand) int {
	if c := cmpOpt(a.it.Record.CreatedAt, b.it.Record.CreatedAt, cmpTime); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.label, b.label), cmp.Compare(a.it.Record.Text, b.it.Record.Text), cmp.Compare(a.key, b.key))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpTime(a, b time.Time) int { return a.Compare(b) }

// cmpOpt compares optional values; a missing value is less than any.
func cmpOpt[T any](a, b *T, f func(T, T) int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return f(*a, *b)
}

// normText is the text compared for duplicates: case and spacing do not
// make two memories different.
func normText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// filter applies rule 2 of Build.
func (p *planner) filter() {
	byID := map[string]*cand{}
	byText := map[string]*cand{}
	for _, c := range p.cands {
		r := &c.it.Record
		c.text = cleanText(r.Text)
		if c.code() {
			c.text, _ = codeText(c.it.Code, 0, 0)
		}
		switch {
		case c.text == "":
			c.reason = ReasonEmpty
		case r.DeletedAt != nil:
			c.reason = ReasonDeleted
		case r.ReplacedBy != "":
			c.reason = ReasonSuperseded + " " + r.ReplacedBy
		case p.expired(c):
			c.reason = ReasonExpiredPin
		case p.opt.Mode == ModeOff && (c.pinKind() == mem.PinLeased || c.pinKind() == PinEphemeral || c.it.Auto && !c.pin()):
			c.reason = ReasonModeOff
		default:
			// A duplicate names the best-ranked item it repeats.
			// Code cards are the same only if they are at the same
			// place: two functions can have the same signature.
			norm := normText(c.text)
			if c.code() {
				norm = "\x00code " + c.label
			}
			k := byID[c.label]
			if t := byText[norm]; t != nil && (k == nil || t.pos < k.pos) {
				k = t
			}
			if k != nil {
				c.reason = ReasonDuplicate + " " + k.label
			} else {
				byID[c.label], byText[norm] = c, c
			}
		}
	}
}

// expired reports whether c is a leased pin whose lease is over: its
// pin_until has passed, its pin_task is closed, or the turns it was
// leased for are over. An ephemeral pin lasts the turn it is given for.
func (p *planner) expired(c *cand) bool {
	r := &c.it.Record
	switch c.pinKind() {
	case mem.PinLeased:
	case PinEphemeral:
		return p.opt.Turn > 0 && c.it.UntilTurn > 0 && p.opt.Turn > c.it.UntilTurn
	default:
		return false
	}
	if u := r.PinUntil; u != nil && !p.opt.Now.IsZero() && u.Before(p.opt.Now) {
		return true
	}
	if r.PinTask != "" && p.opt.Closed != nil && p.opt.Closed(r.PinTask) {
		return true
	}
	return p.opt.Turn > 0 && c.it.UntilTurn > 0 && p.opt.Turn > c.it.UntilTurn
}

// prepare renders and prices every candidate, the left-out ones too, so
// that the plan can say what each would have cost.
func (p *planner) prepare() {
	blocks := make([]string, 0, len(p.cands))
	for _, c := range p.cands {
		c.block = p.draw(c)
		blocks = append(blocks, c.block)
		if c.code() {
			blocks = append(blocks, c.thin)
		}
	}
	counts := p.countAll(blocks)
	for _, c := range p.cands {
		c.tokens, counts = counts[0], counts[1:]
		if c.code() {
			c.thinTokens, counts = counts[0], counts[1:]
		}
		p.fitCap(c)
	}
}

// draw renders c in full: the whole text, or a card.
func (p *planner) draw(c *cand) string {
	if c.code() {
		return p.drawCode(c)
	}
	c.head = header(&c.it.Record, c.it.Section, c.label)
	shown, note := c.text, ""
	if p.carded(c) {
		var cut bool
		if shown, cut = card(c.text, p.cardLines(c)); cut {
			note = cardNote(shown, c.text, false)
		}
	}
	return block(c.head, shown, note)
}

// fitCap truncates c to MaxItemTokens. Pins are exempt. The cap is per item;
// when not even the header fits in it, the shortest form is kept, as the
// budget still bounds the whole.
func (p *planner) fitCap(c *cand) {
	switch {
	case c.code():
		// Never cut: a card too large for the cap is shown thin.
		if p.lim.MaxItemTokens > 0 && c.tokens > p.lim.MaxItemTokens {
			c.thinned()
		}
		return
	case c.whole():
		return
	}
	if !c.pin() && p.lim.MaxItemTokens > 0 && c.tokens > p.lim.MaxItemTokens {
		c.block, c.tokens, _ = p.shorten(c, p.lim.MaxItemTokens)
		c.trunc = true
	}
}

// carded reports whether c is shown as a card.
func (p *planner) carded(c *cand) bool {
	return c.it.Section == SectionRetrieved && p.lim.CardLines > 0 || c.pinKind() == PinEphemeral
}

func cardNote(shown, text string, truncated bool) string {
	what := "card"
	if truncated {
		what = "card, truncated"
	}
	return fmt.Sprintf("%s: %s of %s characters", what,
		thousands(utf8.RuneCountInString(shown)), thousands(utf8.RuneCountInString(text)))
}

// shorten renders c with as much of the beginning of its text as keeps
// its block within limit tokens, and a note saying how much was kept. When
// not even the empty form fits, it returns that form and false.
func (p *planner) shorten(c *cand, limit int) (string, int, bool) {
	src := c.text
	if p.carded(c) {
		src, _ = card(c.text, p.lim.CardLines)
	}
	toks := p.enc.encode(src)
	n := len(toks)
	render := func(k int) string { return p.cut(c, toks, k) }
	// Guess from the cost of the empty form, then step down by the excess:
	// a cut text may take a few tokens more than its share once quoted.
	k := max(0, min(n-1, limit-p.enc.Count(render(0))))
	hi := n // the least k known not to fit: the whole text does not
	var b string
	var t int
	for {
		b = render(k)
		t = p.enc.Count(b)
		if t <= limit || k == 0 {
			break
		}
		hi = k
		k = max(0, k-max(1, t-limit))
	}
	if t > limit {
		return b, t, false
	}
	// A step can overshoot by far, as one token of text can cost many once
	// quoted (a run of blank lines is one token, and a line each), and the
	// guess can fall short: halve the gap between k (fits) and hi (does
	// not), so that as much of the text as fits is kept. (Climbing from k
	// with a doubling stride first took more counts a cut on texts of
	// blank lines, short lines, one-word lines and code, 8.8 to 13.8
	// against 6.8 to 10.0, and 2% fewer on prose.)
	for hi-k > 1 {
		m := k + (hi-k)/2
		bm := render(m)
		if tm := p.enc.Count(bm); tm <= limit {
			k, b, t = m, bm, tm
		} else {
			hi = m
		}
	}
	return b, t, true
}

// cut renders c showing the first k of toks, the tokens of its text (or
// card), with a note saying how much that is.
func (p *planner) cut(c *cand, toks []int, k int) string {
	shown := strings.TrimRight(p.enc.prefix(toks, k), " \t\n")
	if p.carded(c) {
		return block(c.head, shown, cardNote(shown, c.text, true))
	}
	return block(c.head, shown, fmt.Sprintf("truncated: %s of %s tokens", thousands(k), thousands(len(toks))))
}

// countAll counts the tokens of every string, each distinct string once,
// spread over the available processors.
func (p *planner) countAll(strs []string) []int {
	uniq := map[string]int{}
	var todo []string
	for _, s := range strs {
		if _, ok := uniq[s]; !ok {
			uniq[s] = len(todo)
			todo = append(todo, s)
		}
	}
	counts := make([]int, len(todo))
	workers := min(runtime.GOMAXPROCS(0), (len(todo)+15)/16)
	if workers <= 1 {
		for i, s := range todo {
			counts[i] = p.enc.Count(s)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(todo); i = int(next.Add(1) - 1) {
					counts[i] = p.enc.Count(todo[i])
				}
			})
		}
		wg.Wait()
	}
	out := make([]int, len(strs))
	for i, s := range strs {
		out[i] = counts[uniq[s]]
	}
	return out
}

// count counts a structural block (preamble, heading) once per plan.
func (p *planner) count(s string) int {
	n, ok := p.memo[s]
	if !ok {
		n = p.enc.Count(s)
		p.memo[s] = n
	}
	return n
}

// group applies rule 3 of Build.
func (p *planner) group() {
	byAtom := map[string]*unit{}
	for _, c := range p.cands {
		if c.reason != "" {
			continue
		}
		if c.it.Atom != "" {
			if u := byAtom[c.it.Atom]; u != nil {
				u.members = append(u.members, c)
				continue
			}
		}
		u := &unit{members: []*cand{c}}
		if c.it.Atom != "" {
			byAtom[c.it.Atom] = u
		}
		p.units = append(p.units, u)
	}
}

func (u *unit) section() Section { return u.members[0].it.Section }
func (u *unit) pinned() bool     { return u.members[0].pin() }

func (u *unit) tokens() int {
	n := 0
	for _, c := range u.members {
		n += c.tokens
	}
	return n
}

// passes reports whether u reaches the score threshold: some member's
// score does, or no member has one.
func (u *unit) passes(threshold float64) bool {
	scored := false
	for _, c := range u.members {
		if s := c.it.Record.Score; s != nil {
			if *s >= threshold {
				return true
			}
			scored = true
		}
	}
	return !scored
}

func (u *unit) mark(in bool, reason string) {
	for _, c := range u.members {
		c.in, c.reason = in, reason
	}
}

// choose applies rules 4 and 5 of Build.
func (p *planner) choose() {
	used, items, cards := 0, 0, 0
	opened := map[Section]bool{}
	// extra is what including the first unit of section s adds beyond the
	// unit itself.
	extra := func(s Section) int {
		n := 0
		if len(opened) == 0 {
			n += p.count(preamble)
		}
		if !opened[s] {
			n += p.count(headingBlock(s, p.opt.Query))
		}
		return n
	}
	take := func(u *unit, reason string) {
		used += extra(u.section()) + u.tokens()
		opened[u.section()] = true
		u.mark(true, reason)
	}
	for _, u := range p.units {
		cost := extra(u.section()) + u.tokens()
		switch {
		case u.pinned() && used+cost <= p.lim.Budget:
			take(u, ReasonPinned)
		case u.pinned():
			lead := u.members[0]
			if len(u.members) == 1 {
				if b, t, ok := p.shorten(lead, p.lim.Budget-used-extra(u.section())); ok {
					lead.block, lead.tokens, lead.trunc = b, t, true
					take(u, ReasonPinned)
					p.warn = append(p.warn, fmt.Sprintf("pin %s truncated to %s tokens to fit the budget of %s",
						lead.label, thousands(lead.tokens), thousands(p.lim.Budget)))
					continue
				}
			}
			u.mark(false, ReasonOverBudget)
			p.warn = append(p.warn, fmt.Sprintf("pin %s left out: %s tokens do not fit in the %s left of the budget of %s",
				lead.label, thousands(cost), thousands(p.lim.Budget-used), thousands(p.lim.Budget)))
		case u.section() == SectionCodeMap && p.lim.MapTokens > 0 && u.tokens() > p.lim.MapTokens:
			u.mark(false, ReasonMapLimit)
		case u.section() == SectionCodeMap && used+cost > p.lim.Budget:
			u.mark(false, ReasonOverBudget)
		case u.section() == SectionCodeMap:
			take(u, ReasonInBudget)
		case u.section() == SectionCode:
			// Scores of code are not those of memories: no threshold.
			c := u.members[0]
			switch {
			case p.lim.CodeCards > 0 && cards+len(u.members) > p.lim.CodeCards:
				u.mark(false, ReasonMaxCode)
			case used+cost > p.lim.Budget && len(u.members) == 1 && c.form == FormExcerpt &&
				used+cost-c.tokens+c.thinTokens <= p.lim.Budget:
				c.thinned()
				fallthrough
			case used+cost <= p.lim.Budget:
				take(u, ReasonInBudget)
				cards += len(u.members)
			default:
				u.mark(false, ReasonOverBudget)
			}
		case !u.passes(p.lim.ScoreThreshold):
			u.mark(false, ReasonBelowThreshold)
		case p.lim.MaxItems > 0 && items+len(u.members) > p.lim.MaxItems:
			u.mark(false, ReasonMaxItems)
		case used+cost > p.lim.Budget:
			u.mark(false, ReasonOverBudget)
		default:
			take(u, ReasonInBudget)
			items += len(u.members)
		}
	}
}

// rendered is the prompt and what it is made of.
type rendered struct {
	text     string
	order    []*cand // the included items, in the order they appear
	overhead int     // tokens of the preamble and the headings
	used     int     // tokens of text
}

// finish renders the prompt and counts it as a whole. The blocks are built
// so that the whole costs the sum of its parts; should the tokenizer ever
// disagree, the last-ranked units are dropped until the budget holds, so
// the budget is never exceeded.
func (p *planner) finish() rendered {
	for {
		r := p.render()
		r.used = p.enc.Count(r.text)
		if r.used <= p.lim.Budget {
			return r
		}
		drop := p.lastIncluded(false)
		if drop == nil {
			drop = p.lastIncluded(true)
		}
		drop.mark(false, ReasonOverBudget)
		p.warn = append(p.warn, fmt.Sprintf("the prompt counted %s tokens as a whole, over the budget; %s left out",
			thousands(r.used), drop.members[0].label))
	}
}

// lastIncluded returns the lowest-ranked included unit that is pinned or
// not, as asked.
func (p *planner) lastIncluded(pinned bool) *unit {
	for i := len(p.units) - 1; i >= 0; i-- {
		if u := p.units[i]; u.members[0].in && u.pinned() == pinned {
			return u
		}
	}
	return nil
}

// render writes the included units: the preamble, then each section that
// has any, under its heading. Stable sections read oldest first, so that a
// new item is appended; the others in rank order. An atom's members stay
// together, oldest first.
func (p *planner) render() rendered {
	bySec := map[Section][]*unit{}
	for _, u := range p.units {
		if u.members[0].in {
			bySec[u.section()] = append(bySec[u.section()], u)
		}
	}
	var r rendered
	if len(bySec) == 0 {
		return r
	}
	var b strings.Builder
	b.WriteString(preamble)
	r.overhead = p.count(preamble)
	for _, s := range sections {
		us := bySec[s]
		if len(us) == 0 {
			continue
		}
		h := headingBlock(s, p.opt.Query)
		b.WriteString(h)
		r.overhead += p.count(h)
		read := make([][]*cand, len(us))
		for i, u := range us {
			read[i] = slices.SortedFunc(slices.Values(u.members), byTime)
		}
		if s.stable() {
			slices.SortFunc(read, func(a, b []*cand) int { return byTime(a[0], b[0]) })
		}
		for _, ms := range read {
			for _, c := range ms {
				b.WriteString(c.block)
				r.order = append(r.order, c)
			}
		}
	}
	r.text = b.String()
	return r
}

// plan writes up the result.
func (p *planner) plan(r rendered) *Plan {
	pl := &Plan{
		ID: p.id(), Version: Version, Mode: p.opt.Mode, Encoding: p.opt.Encoding,
		Budget: p.lim.Budget, Used: r.used, Overhead: r.overhead, Query: p.opt.Query, Limits: p.lim,
		Included: make([]Entry, 0, len(r.order)), Excluded: make([]Entry, 0, len(p.cands)-len(r.order)),
		Warnings: p.warn, prompt: r.text,
	}
	for _, c := range r.order {
		pl.Included = append(pl.Included, c.entry())
	}
	for _, c := range p.cands {
		if !c.in {
			pl.Excluded = append(pl.Excluded, c.entry())
		}
	}
	return pl
}

func (c *cand) entry() Entry {
	e := Entry{
		ID: c.label, Kind: c.it.Record.Kind, Section: c.it.Section, Tokens: c.tokens, Reason: c.reason,
		Truncated: c.trunc, Atom: c.it.Atom, Score: c.it.Record.Score,
	}
	if c.code() {
		e.Path, e.Line, e.Form = c.it.Code.Path, c.it.Code.Line, c.form
	}
	e.Pin = c.pinKind()
	return e
}

// drawCode renders a code card in its full form, and its thin form
// beside it.
func (p *planner) drawCode(c *cand) string {
	c.head = codeHeader(c.it.Code, c.label)
	text, note := codeText(c.it.Code, p.lim.CardLines, 0)
	c.thin = block(c.head, text, note)
	c.form = FormThin
	if p.lim.ExcerptLines == 0 {
		return c.thin
	}
	full, fnote := codeText(c.it.Code, p.lim.CardLines, p.lim.ExcerptLines)
	if full == text {
		return c.thin
	}
	c.form = FormExcerpt
	return block(c.head, full, fnote)
}

// thinned shows a code card in its thin form.
func (c *cand) thinned() { c.block, c.tokens, c.form = c.thin, c.thinTokens, FormThin }

// id hashes what determines the plan: the version, the options (but for
// the clock, which matters only through the pins it expires) and every
// item, in rank order so that the input order does not change it.
func (p *planner) id() string {
	h := sha256.New()
	head, _ := json.Marshal(struct {
		Version  int    `json:"version"`
		Mode     Mode   `json:"mode"`
		Encoding string `json:"encoding"`
		Query    string `json:"query"`
		Limits   Limits `json:"limits"`
	}{Version, p.opt.Mode, p.opt.Encoding, p.opt.Query, p.lim})
	h.Write(head)
	h.Write([]byte{'\n'})
	for _, c := range p.cands {
		h.Write([]byte(c.key))
		if c.reason == ReasonExpiredPin {
			h.Write([]byte(" expired"))
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
