package mem

// TurnOptions tune one append of conversation turns (mira.Memory.AppendTurns).
type TurnOptions struct {
	// Source is the commit's Mira-Source trailer (default "api").
	Source string
	// Subject, when set, makes the commit subject from the turns, which
	// have their ids by then; else it is turnsSubject's, e.g.
	// `turns: 1 user turn in conversation alice "What do I…"`.
	Subject func(turns []*Entry) string
	// Trailers follow Mira-Source in the commit.
	Trailers []Trailer
	// Artifacts are files already written in the store's artifacts
	// directory (artifacts/<scope>/<name>, such as the whole output of a
	// tool call) committed with the turns, so that what a turn refers to
	// is in the same commit.
	Artifacts []string
}
