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
	// budget.
	ModeLight Mode = "light"
	// ModeHeavy shows whole memories, more of them, in a larger budget.
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
}

// Defaults returns the built-in limits of mode m (of ModeLight for an
// unknown mode). Scores depend on the retriever, so no default threshold
// filters anything out; it is there to be configured.
func (m Mode) Defaults() Limits {
	switch m {
	case ModeOff:
		return Limits{Budget: 2000, MaxItems: 20, CardLines: 0, MaxItemTokens: 500}
	case ModeHeavy:
		return Limits{Budget: 16000, MaxItems: 40, CardLines: 0, MaxItemTokens: 4000}
	}
	return Limits{Budget: 4000, MaxItems: 12, CardLines: 3, MaxItemTokens: 400}
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
	}
	return nil
}
