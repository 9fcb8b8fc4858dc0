package ctx

import "github.com/miramem/mira/mem"

// PinEphemeral is the Record.Pin of a pin that lasts one turn: an agent
// session puts it in the pins section as a thin card, never in the store
// (whose pins are sticky or leased).
const PinEphemeral = "ephemeral"

// PinKinds are the kinds of pin in rank order: when pins alone overflow
// the budget, the standing instruction is kept before the lease, and the
// lease before the passing hint.
var PinKinds = []string{mem.PinSticky, mem.PinLeased, PinEphemeral}

// EphemeralLines is how many lines of its text an ephemeral pin shows:
// a hook to the memory, not the memory.
const EphemeralLines = 2

// pinRank is a kind's place in PinKinds; not a pin ranks last.
func pinRank(kind string) int {
	for i, k := range PinKinds {
		if k == kind {
			return i
		}
	}
	return len(PinKinds)
}

// cardLines is how many lines c's card shows.
func (p *planner) cardLines(c *cand) int {
	if c.pinKind() == PinEphemeral {
		return EphemeralLines
	}
	return p.lim.CardLines
}

// PinCounts counts the included pins of the plan by kind.
func (p *Plan) PinCounts() map[string]int {
	n := map[string]int{}
	for _, e := range p.Included {
		if e.Pin != "" {
			n[e.Pin]++
		}
	}
	return n
}
