package ctx

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/miramem/mira/mem"
)

// Section is the part of the context block an item belongs to. Sections
// are rendered in the order of the constants below: stable material first
// and the query-dependent retrieved memories last, so that a provider's
// prompt cache keeps hitting while only the tail changes.
type Section string

// The sections, in rendering order.
const (
	SectionPins        Section = "pins"
	SectionCorrections Section = "corrections"
	SectionGoals       Section = "goals"
	SectionTasks       Section = "tasks"
	SectionSummary     Section = "summary"
	// SectionCodeMap holds the code map: the project's module tree and
	// central symbols. It changes only with the code, so it sits with the
	// stable sections.
	SectionCodeMap   Section = "code_map"
	SectionAdHoc     Section = "adhoc"
	SectionRetrieved Section = "retrieved"
	// SectionCode holds the code cards retrieved for the query: it
	// changes with every query, so it comes last.
	SectionCode Section = "code"
)

// sections lists every section in rendering order.
var sections = []Section{SectionPins, SectionCorrections, SectionGoals, SectionTasks, SectionSummary, SectionCodeMap,
	SectionAdHoc, SectionRetrieved, SectionCode}

// rank returns the section's position in sections, or -1.
func (s Section) rank() int {
	for i, t := range sections {
		if t == s {
			return i
		}
	}
	return -1
}

// heading is the section's Markdown heading line.
func (s Section) heading() string {
	switch s {
	case SectionPins:
		return "Pinned"
	case SectionCorrections:
		return "Corrections"
	case SectionGoals:
		return "Goals"
	case SectionTasks:
		return "Tasks"
	case SectionSummary:
		return "Summary"
	case SectionCodeMap:
		return "Code map"
	case SectionAdHoc:
		return "Given text"
	case SectionCode:
		return "Code"
	}
	return "Retrieved memories"
}

// stable reports whether the section is ordered by time rather than by
// relevance, so that a new item lands at its end.
func (s Section) stable() bool { return s.rank() < SectionAdHoc.rank() }

// AtomField is the record field that names an item's atom.
const AtomField = "atom"

// Item is a candidate for the context block: a record, the section it goes
// in, and the atom it belongs to.
type Item struct {
	// Record is the memory, in the pipe format.
	Record mem.Record
	// Section is where the item is rendered. An item in SectionPins is
	// always included; it is a leased pin if Record.Pin is "leased", an
	// ephemeral one (shown as a card of EphemeralLines lines) if it is
	// PinEphemeral, and a sticky one otherwise.
	Section Section
	// Atom groups items that must be included or left out together, such
	// as a tool call and its result, or a turn and its reply. Items with
	// the same non-empty Atom form one unit.
	Atom string
	// Auto marks an item the caller added from the store on its own (pins,
	// open corrections, goals, tasks, the latest summary) rather than one
	// given explicitly on input. ModeOff leaves auto items out, except
	// sticky pins.
	Auto bool
	// UntilTurn, when above zero, is the last turn (Options.Turn) a leased
	// or ephemeral pin lasts: a lease of the session, never stored.
	UntilTurn int
	// Code is the card of an item in SectionCode (nil elsewhere). Its
	// Record has the card's Ref as id, its kind and its score, no text.
	Code *Code
}

// FromRecord makes an item of r. The section follows from the record: a
// pin goes to pins; a correction, goal, task or summary to its own section;
// anything else is a retrieved memory. The atom is the record's "atom"
// field.
func FromRecord(r mem.Record) Item {
	it := Item{Record: r, Section: SectionRetrieved, Atom: atomOf(r)}
	switch {
	case r.Pin == mem.PinSticky || r.Pin == mem.PinLeased:
		it.Section = SectionPins
	case r.Kind == mem.KindCorrection:
		it.Section = SectionCorrections
	case r.Kind == mem.KindGoal:
		it.Section = SectionGoals
	case r.Kind == mem.KindTask:
		it.Section = SectionTasks
	case r.Kind == mem.KindSummary:
		it.Section = SectionSummary
	}
	return it
}

// AdHoc makes an item of a plain text given on input. Its id is derived
// from the text ("text-" and 12 hex digits), so that equal texts get equal
// ids and the plan does not depend on the order of the input.
func AdHoc(text string) Item {
	sum := sha256.Sum256([]byte(text))
	return Item{
		Record:  mem.Record{ID: "text-" + hex.EncodeToString(sum[:6]), Text: text},
		Section: SectionAdHoc,
	}
}

// atomOf reads the atom field. JSON gives numbers as float64; any other
// value is keyed by its JSON text, so that equal values group.
func atomOf(r mem.Record) string {
	switch v := r.Extra[AtomField].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
}
