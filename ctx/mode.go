package ctx

import "fmt"

// Mode is a context profile: how much the planner adds on its own.
type Mode string

// The modes. Light is the default.
const (
	// ModeOff keeps only what was given explicitly on input and sticky
	// pins; everything the caller added from the store is left out.
	ModeOff Mode = "off"
	// ModeLight shows retrieved memories as compact cards within a small
	// budget, and code as the map and thin cards (signature, doc, path).
	ModeLight Mode = "light"
	// ModeHeavy shows whole memories, more of them, in a larger budget,
	// and code cards with their excerpts or bodies.
	ModeHeavy Mode = "heavy"
)

// ParseMode returns the mode called s; "" means ModeLight.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeLight, nil
	case ModeOff, ModeLight, ModeHeavy:
		return m, nil
	}
	return "", fmt.Errorf("unknown context mode %q (want off, light or heavy)", s)
}

// Limits bound a plan. A caller starts from Mode.Defaults and overrides what
// its configuration or flags say.
type Limits struct {
	// Budget is the most tokens the rendered prompt may have, headers and
	// delimiters included. It must be positive.
	Budget int `json:"budget"`
	// MaxItems is the most items included besides pins (0: no limit).
	MaxItems int `json:"max_items"`
	// CardLines is how many lines of a retrieved memory its card shows
	// (0: the whole text).
	CardLines int `json:"card_lines"`
	// MaxItemTokens caps one item's rendered block; longer items are
	// truncated visibly (0: no cap). Pins are not capped: they are only
	// truncated when they do not fit in the budget at all.
	MaxItemTokens int `json:"max_item_tokens"`
	// ScoreThreshold leaves out items whose score is below it. Items without
	// a score and pins are never left out for their score.
	ScoreThreshold float64 `json:"score_threshold"`
	// CodeCards is the most code cards included (0: no limit). They do
	// not count against MaxItems.
	CodeCards int `json:"code_cards"`
	// ExcerptLines is how many lines of source a code card shows below its
	// signature and doc: its excerpt, else its snippet or body (0: none,
	// a thin card). A code card is never cut: one that does not fit in
	// MaxItemTokens or in the budget is shown thin, or left out.
	ExcerptLines int `json:"excerpt_lines"`
	// MapTokens is the most tokens of the code map (0: no limit); a larger
	// map is left out, never cut.
	MapTokens int `json:"map_tokens"`
}

// Defaults returns the built-in limits of mode m (of ModeLight for an
// unknown mode). Scores depend on the retriever, so no default threshold
// filters anything out; it is there to be configured.
func (m Mode) Defaults() Limits {
	switch m {
	case ModeOff:
		return Limits{Budget: 2000, MaxItems: 20, CardLines: 0, MaxItemTokens: 500, CodeCards: 6}
	case ModeHeavy:
		return Limits{Budget: 16000, MaxItems: 40, CardLines: 0, MaxItemTokens: 4000,
			CodeCards: 12, ExcerptLines: 30, MapTokens: 2000}
	}
	return Limits{Budget: 4000, MaxItems: 12, CardLines: 3, MaxItemTokens: 400, CodeCards: 6, MapTokens: 800}
}

func (l Limits) validate() error {
	switch {
	case l.Budget <= 0:
		return fmt.Errorf("token budget must be positive, not %d", l.Budget)
	case l.MaxItems < 0:
		return fmt.Errorf("max items must not be negative, not %d", l.MaxItems)
	case l.CardLines < 0:
		return fmt.Errorf("card lines must not be negative, not %d", l.CardLines)
	case l.MaxItemTokens < 0:
		return fmt.Errorf("max item tokens must not be negative, not %d", l.MaxItemTokens)
	case l.CodeCards < 0:
		return fmt.Errorf("code cards must not be negative, not %d", l.CodeCards)
	case l.ExcerptLines < 0:
		return fmt.Errorf("excerpt lines must not be negative, not %d", l.ExcerptLines)
	case l.MapTokens < 0:
		return fmt.Errorf("map tokens must not be negative, not %d", l.MapTokens)
	}
	return nil
}
