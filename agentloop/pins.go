package agentloop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/mem"
)

// The session's own pins: ephemeral pins, which last one turn, and leases
// of a number of turns. They live in the agent's memory only and are
// never written to the store; the sticky pins and the leases of a time or
// a task are the store's (pin, pin_until, pin_task). See activation.go
// for how an item's use keeps, promotes and ends them.

// PinLibrary is a Library that also reads one memory by id and says
// whether a task is closed. The agent needs it for the session's pins
// (Pin) and for leases that last as long as a task; without it, it has
// neither.
type PinLibrary interface {
	Library
	// Get returns the live memory with the given id.
	Get(ctx context.Context, id string) (mem.Record, error)
	// TaskClosed reports whether the goal or task id is closed or gone.
	TaskClosed(ctx context.Context, id string) (bool, error)
}

// Session pin kinds (Pin's kind).
const (
	PinEphemeral = plan.PinEphemeral
	PinLeased    = mem.PinLeased
)

// MaxSuggestions bounds the suggestions kept; the oldest go first.
const MaxSuggestions = 20

// sessionPin is a pin of the session.
type sessionPin struct {
	kind      string // PinEphemeral or PinLeased
	untilTurn int    // the last turn it lasts
	promoted  bool   // a lease that activation gave: it ends when activation decays
}

// activity is what the session knows of an item it has seen.
type activity struct {
	rec       mem.Record
	refs      refs
	section   plan.Section
	score     float64
	lastTurn  int    // the last turn it was in a plan
	storedPin string // the store's pin, if any
}

// Suggestion is a pin the model suggested (suggest_pin); only the user
// applies it.
type Suggestion struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
	Turn   int    `json:"turn"`
	// Text is the first line of the memory.
	Text string `json:"text,omitempty"`
}

// pinState is the agent's pins, activation and suggestions.
type pinState struct {
	turn        int // the last turn planned (Send)
	pins        map[string]*sessionPin
	seen        map[string]*activity
	suggestions []Suggestion
	fresh       []Suggestion         // suggested during the last message
	items       map[string]plan.Item // the items of the plans of the turn, by id
}

func (s *pinState) init() {
	if s.pins == nil {
		s.pins, s.seen, s.items = map[string]*sessionPin{}, map[string]*activity{}, map[string]plan.Item{}
	}
}

// nextTurn is the number of the turn the next message begins.
func (a *Agent) nextTurn() int { return a.pinState.turn + 1 }

// noteItems keeps the items of a plan by id, for beginTurn.
func (a *Agent) noteItems(items []plan.Item) {
	a.pinState.init()
	for _, it := range items {
		if it.Record.ID != "" {
			a.pinState.items[it.Record.ID] = it
		}
	}
}

// pinLibrary returns the library as a PinLibrary, or nil.
func (a *Agent) pinLibrary() PinLibrary {
	pl, _ := a.cfg.Library.(PinLibrary)
	return pl
}

// Pin pins the memory id for this session: PinEphemeral for the next
// turn, or PinLeased for the next turns turns. Sticky pins and leases of
// a time or a task belong in the store (mira.Memory.PinLease). Pinning a
// memory the model suggested takes the suggestion away.
func (a *Agent) Pin(ctx context.Context, id, kind string, turns int) error {
	pl := a.pinLibrary()
	if pl == nil {
		return errors.New("this session has no memory store to pin from")
	}
	switch {
	case kind == PinEphemeral && turns != 0:
		return errors.New("an ephemeral pin lasts one turn; give leased for a number of turns")
	case kind == PinLeased && turns < 1:
		return errors.New("a lease of the session needs a number of turns, such as 3turns")
	case kind != PinEphemeral && kind != PinLeased:
		return fmt.Errorf("unknown session pin %q (want ephemeral or leased)", kind)
	}
	r, err := pl.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("memory %s: %w", id, err)
	}
	a.pinState.init()
	p := &sessionPin{kind: kind, untilTurn: a.pinState.turn + 1}
	if kind == PinLeased {
		p.untilTurn = a.pinState.turn + turns
	}
	a.pinState.pins[r.ID] = p
	a.see(r, "", 0)
	a.dropSuggestion(r.ID)
	return nil
}

// Unpin takes the session's pin of id away, and reports whether there
// was one. The store's pin is the front end's to take away.
func (a *Agent) Unpin(id string) bool {
	a.dropSuggestion(id)
	if _, ok := a.pinState.pins[id]; !ok {
		return false
	}
	delete(a.pinState.pins, id)
	return true
}

// SuggestPin records the model's suggestion to pin the memory id, for the
// user to accept with /pin or not. It implements tools.PinSuggester.
func (a *Agent) SuggestPin(ctx context.Context, id, reason string) (string, error) {
	pl := a.pinLibrary()
	if pl == nil {
		return "", errors.New("there is no memory store to pin from")
	}
	r, err := pl.Get(ctx, id)
	if err != nil {
		return "", fmt.Errorf("memory %s: %w", id, err)
	}
	if r.Pin == mem.PinSticky {
		return fmt.Sprintf("%s is pinned already (sticky).", r.ID), nil
	}
	s := Suggestion{ID: r.ID, Reason: strings.TrimSpace(reason), Turn: a.pinState.turn, Text: firstLine(r.Text, 80)}
	a.dropSuggestion(r.ID)
	a.pinState.suggestions = append(a.pinState.suggestions, s)
	if n := len(a.pinState.suggestions); n > MaxSuggestions {
		a.pinState.suggestions = a.pinState.suggestions[n-MaxSuggestions:]
	}
	a.pinState.fresh = append(a.pinState.fresh, s)
	return fmt.Sprintf("Suggested pinning %s; the user decides.", r.ID), nil
}

func (a *Agent) dropSuggestion(id string) {
	del := func(s Suggestion) bool { return s.ID == id }
	a.pinState.suggestions = slices.DeleteFunc(a.pinState.suggestions, del)
	a.pinState.fresh = slices.DeleteFunc(a.pinState.fresh, del)
}

// NewSuggestions returns the suggestions made during the last message, and
// forgets that they are new.
func (a *Agent) NewSuggestions() []Suggestion {
	out := a.pinState.fresh
	a.pinState.fresh = nil
	return out
}

// PinView is one line of /context pins: a pin (of the store or of the
// session), or an item with activation.
type PinView struct {
	ID   string `json:"id"`
	Kind string `json:"kind,omitempty"` // sticky, leased, ephemeral, or "" for no pin
	// Session says the pin is the session's, not the store's.
	Session bool `json:"session,omitempty"`
	// Until says where a lease ends: "turn N", a time, "task ID".
	Until string `json:"until,omitempty"`
	// Promoted says the session's activation made it a lease.
	Promoted bool `json:"promoted,omitempty"`
	// Reason is what the standing plan says of the pin: pinned, or why it
	// is left out (expired pin, over budget…).
	Reason     string  `json:"reason,omitempty"`
	Activation float64 `json:"activation"`
	Section    string  `json:"section,omitempty"`
	Text       string  `json:"text,omitempty"`
}

// PinsView is /context pins: the pins and the activation of the items
// seen, pins first, then by activation, and the model's suggestions.
type PinsView struct {
	// Turn is the last turn of the session (0 before the first).
	Turn        int          `json:"turn"`
	Items       []PinView    `json:"items"`
	Suggestions []Suggestion `json:"suggestions"`
}

// Pins reports the pins, the activation and the suggestions of the
// session. The pins are those of the standing context the next message
// would have, planned now, with the reason the plan gives each.
func (a *Agent) Pins(ctx context.Context) (*PinsView, error) {
	if err := a.refresh(); err != nil {
		return nil, err
	}
	standing, err := a.planStanding(ctx)
	if err != nil {
		return nil, err
	}
	st := &a.pinState
	st.init()
	v := &PinsView{Turn: st.turn, Suggestions: slices.Clone(st.suggestions)}
	if v.Suggestions == nil {
		v.Suggestions = []Suggestion{}
	}
	byID := map[string]*PinView{}
	add := func(id string) *PinView {
		if pv := byID[id]; pv != nil {
			return pv
		}
		pv := &PinView{ID: id}
		byID[id] = pv
		return pv
	}
	for _, e := range append(slices.Clip(standing.Included), standing.Excluded...) {
		if e.Pin == "" || byID[e.ID] != nil {
			continue
		}
		pv := add(e.ID)
		pv.Kind, pv.Reason, pv.Section = e.Pin, e.Reason, string(e.Section)
		it := st.items[e.ID]
		pv.Text = firstLine(it.Record.Text, 80)
		if p := st.pins[e.ID]; p != nil {
			pv.Session, pv.Promoted = true, p.promoted
			if p.untilTurn > 0 {
				pv.Until = fmt.Sprintf("turn %d", p.untilTurn)
			}
			continue
		}
		var until []string
		if u := it.Record.PinUntil; u != nil {
			until = append(until, u.UTC().Format("2006-01-02 15:04"))
		}
		if t := it.Record.PinTask; t != "" {
			until = append(until, "task "+t)
		}
		pv.Until = strings.Join(until, " or ")
	}
	for id, act := range st.seen {
		if act.score == 0 && byID[id] == nil {
			continue
		}
		pv := add(id)
		pv.Activation = round2(act.score)
		if pv.Section == "" {
			pv.Section = string(act.section)
		}
		if pv.Text == "" {
			pv.Text = firstLine(act.rec.Text, 80)
		}
	}
	for _, pv := range byID {
		v.Items = append(v.Items, *pv)
	}
	slices.SortFunc(v.Items, func(x, y PinView) int {
		return cmp.Or(cmp.Compare(pinOrder(x.Kind), pinOrder(y.Kind)), cmp.Compare(y.Activation, x.Activation), cmp.Compare(x.ID, y.ID))
	})
	return v, nil
}

func pinOrder(kind string) int {
	if i := slices.Index(plan.PinKinds, kind); i >= 0 {
		return i
	}
	return len(plan.PinKinds)
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// see notes an item of a plan (section "" for a session pin not planned
// yet), with gain.
func (a *Agent) see(r mem.Record, sec plan.Section, gain float64) *activity {
	st := &a.pinState
	st.init()
	act := st.seen[r.ID]
	if act == nil {
		act = &activity{}
		st.seen[r.ID] = act
	}
	if act.rec.Text != r.Text || act.refs.id == "" {
		act.refs = newRefs(r.ID, "", "", r.Text)
	}
	act.rec = r
	if sec != "" {
		act.section = sec
	}
	act.score += gain
	return act
}

// seeCode notes a code card of a plan.
func (a *Agent) seeCode(it plan.Item, gain float64) {
	st := &a.pinState
	st.init()
	id := it.Record.ID
	act := st.seen[id]
	if act == nil {
		act = &activity{refs: newRefs("", it.Code.Path, it.Code.Name, "")}
		st.seen[id] = act
	}
	act.rec, act.section = it.Record, plan.SectionCode
	act.score += gain
}

// sessionItems are the session's pins as items of the standing context
// planned for turn: their memories read anew, so that an edit shows.
// A pin whose memory is gone ends.
func (a *Agent) sessionItems(ctx context.Context) []plan.Item {
	pl := a.pinLibrary()
	if pl == nil || len(a.pinState.pins) == 0 {
		return nil
	}
	ids := make([]string, 0, len(a.pinState.pins))
	for id := range a.pinState.pins {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var items []plan.Item
	for _, id := range ids {
		p := a.pinState.pins[id]
		r, err := pl.Get(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				a.cfg.Warn(fmt.Errorf("pin %s ends: %w", id, err))
				delete(a.pinState.pins, id)
			}
			continue
		}
		r.Pin, r.PinUntil, r.PinTask = p.kind, nil, ""
		items = append(items, plan.Item{Record: r, Section: plan.SectionPins, UntilTurn: p.untilTurn, Auto: true})
	}
	return items
}

// closedFunc is the planner's Options.Closed: each task looked up once
// per plan. A failure keeps the lease and is reported.
func (a *Agent) closedFunc(ctx context.Context) func(string) bool {
	pl := a.pinLibrary()
	if pl == nil {
		return nil
	}
	seen := map[string]bool{}
	return func(id string) bool {
		c, ok := seen[id]
		if !ok {
			var err error
			if c, err = pl.TaskClosed(ctx, id); err != nil && ctx.Err() == nil {
				a.cfg.Warn(fmt.Errorf("task %s of a leased pin: %w", id, err))
			}
			seen[id] = c
		}
		return c
	}
}

// beginTurn starts turn n: every activation decays, then the items of
// the turn's plans gain theirs, and those the user's text references.
// The store's pins are noted as the plan shows them.
func (a *Agent) beginTurn(n int, text string, standing, recall *plan.Plan) {
	st := &a.pinState
	st.init()
	st.turn = n
	items := st.items
	st.items = map[string]plan.Item{}
	for _, act := range st.seen {
		act.score = decay(act.score)
	}
	for _, p := range []*plan.Plan{standing, recall} {
		if p == nil {
			continue
		}
		for _, e := range p.Included {
			it, ok := items[e.ID]
			if !ok {
				continue
			}
			switch {
			case it.Code != nil:
				a.seeCode(it, GainIncluded)
			case it.Record.ID == "" || e.Section == plan.SectionSummary || e.Section == plan.SectionCodeMap:
				continue // not a memory one can pin
			default:
				act := a.see(it.Record, e.Section, GainIncluded)
				act.lastTurn = n
				act.storedPin = ""
				if st.pins[e.ID] == nil && e.Pin != "" {
					act.storedPin = e.Pin
				}
			}
		}
	}
	said := newText(text)
	for _, act := range st.seen {
		if act.refs.in(said) {
			act.score += GainUser
		}
	}
}

// endTurn applies the model's reply to the activation, then the rules:
// ephemeral pins end, stay or become leases, promoted leases whose use
// faded end, a lease of turns past its last turn ends, and recalled
// memories the conversation used become ephemeral pins.
func (a *Agent) endTurn(reply string) {
	st := &a.pinState
	st.init()
	said := newText(reply)
	for _, act := range st.seen {
		if act.refs.in(said) {
			act.score += GainReply
		}
	}
	n := st.turn
	for id, act := range st.seen {
		p := st.pins[id]
		kind, promoted := "", false
		if p != nil {
			kind, promoted = p.kind, p.promoted
		}
		switch settle(act.score, kind, promoted, act.storedPin != "") {
		case fatePromote:
			p.kind, p.promoted, p.untilTurn = PinLeased, true, 0
		case fateKeep:
			p.untilTurn = n + 1
		case fateEnd:
			delete(st.pins, id)
		case fateHint:
			if act.section == plan.SectionRetrieved && act.lastTurn == n {
				st.pins[id] = &sessionPin{kind: PinEphemeral, untilTurn: n + 1}
			}
		}
		// A lease of turns ends once a plan has shown it expired.
		if p := st.pins[id]; p != nil && p.kind == PinLeased && !p.promoted && p.untilTurn < n {
			delete(st.pins, id)
		}
	}
	// A promoted lease lasts while its activation holds: it has no last
	// turn, the planner never expires it.
	for id, act := range st.seen {
		if st.pins[id] == nil && act.score == 0 && act.storedPin == "" {
			delete(st.seen, id)
		}
	}
}
