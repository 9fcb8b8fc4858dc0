package ctx

import (
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

func leased(id, text string, d int) Item {
	it := pinned(id, text, d)
	it.Record.Pin = mem.PinLeased
	return it
}

func ephemeral(id, text string, d, untilTurn int) Item {
	it := pinned(id, text, d)
	it.Record.Pin = PinEphemeral
	it.UntilTurn = untilTurn
	return it
}

func reasonOf(p *Plan, id string) string {
	for _, e := range append(append([]Entry(nil), p.Included...), p.Excluded...) {
		if e.ID == id {
			return e.Reason
		}
	}
	return "(absent)"
}

func TestTaskLeaseExpiresWhenTaskCloses(t *testing.T) {
	it := leased("p1", "Use the staging database while migrating.", 1)
	it.Record.PinTask = "task1"
	closed := map[string]bool{}
	opt := Options{Closed: func(id string) bool { return closed[id] }}
	if r := reasonOf(build(t, []Item{it}, opt), "p1"); r != ReasonPinned {
		t.Fatalf("open task: reason %q, want %q", r, ReasonPinned)
	}
	closed["task1"] = true
	p := build(t, []Item{it}, opt)
	if r := reasonOf(p, "p1"); r != ReasonExpiredPin {
		t.Fatalf("closed task: reason %q, want %q", r, ReasonExpiredPin)
	}
	if p.ID == build(t, []Item{it}, Options{}).ID {
		t.Error("which pins expired is not part of the plan id")
	}
}

func TestTurnLeaseExpiresAfterItsTurns(t *testing.T) {
	it := leased("p1", "Answer in French.", 1)
	it.UntilTurn = 4
	for turn, want := range map[int]string{0: ReasonPinned, 3: ReasonPinned, 4: ReasonPinned, 5: ReasonExpiredPin} {
		if r := reasonOf(build(t, []Item{it}, Options{Turn: turn}), "p1"); r != want {
			t.Errorf("turn %d: reason %q, want %q", turn, r, want)
		}
	}
	// A stored lease with an end time still ends at it.
	until := now.Add(-time.Hour)
	it = leased("p2", "x", 1)
	it.Record.PinUntil = &until
	if r := reasonOf(build(t, []Item{it}, Options{Turn: 1}), "p2"); r != ReasonExpiredPin {
		t.Errorf("past pin_until: reason %q", r)
	}
}

func TestEphemeralPinIsThinAndLastsItsTurn(t *testing.T) {
	text := "Line one of the note.\nLine two.\nLine three that is not shown.\nLine four."
	it := ephemeral("e1", text, 1, 2)
	p := build(t, []Item{it}, Options{Turn: 2})
	if r := reasonOf(p, "e1"); r != ReasonPinned {
		t.Fatalf("reason %q, want pinned", r)
	}
	if out := p.Prompt(); !strings.Contains(out, "Line two.") || strings.Contains(out, "Line three") {
		t.Errorf("an ephemeral pin shows more or less than its first %d lines:\n%s", EphemeralLines, out)
	}
	if r := reasonOf(build(t, []Item{it}, Options{Turn: 3}), "e1"); r != ReasonExpiredPin {
		t.Errorf("next turn: reason %q, want %q", r, ReasonExpiredPin)
	}
	if r := reasonOf(build(t, []Item{it}, Options{Mode: ModeOff, Turn: 2}), "e1"); r != ReasonModeOff {
		t.Errorf("mode off: reason %q, want %q", r, ReasonModeOff)
	}
}

func TestPinKindsRankAndMeter(t *testing.T) {
	items := []Item{
		ephemeral("e1", "ephemeral hint", 3, 0),
		leased("l1", "leased note", 2),
		pinned("s1", "sticky rule", 1),
		// Not a pin, but in the atom of one: included with it, and
		// not counted as a pin.
		withAtom(retrieved("r1", "goes with the sticky rule", 1, 0.9), "a"),
		withAtom(pinned("s2", "second sticky rule", 1), "a"),
	}
	p := build(t, items, Options{})
	var order []string
	for _, e := range p.Included {
		if e.Section == SectionPins {
			order = append(order, e.ID+":"+e.Pin)
		}
	}
	if got, want := strings.Join(order, " "), "s2:sticky s1:sticky l1:leased e1:ephemeral"; got != want {
		t.Errorf("pins in order %q, want %q", got, want)
	}
	if m := p.Meter(); !strings.Contains(m, " in (4 pinned: 2 sticky, 1 leased, 1 ephemeral) ·") {
		t.Errorf("Meter() = %q", m)
	}
	if m := build(t, items[2:3], Options{}).Meter(); !strings.Contains(m, "1 in (1 pinned: 1 sticky) ·") {
		t.Errorf("Meter() = %q", m)
	}
}
