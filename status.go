package mira

import (
	"slices"
	"strings"
)

// StatusOpen is the status of a goal or task not yet closed.
const StatusOpen = "open"

// ClosedStatus are the statuses that take a correction, goal or task out
// of the standing material.
var ClosedStatus = []string{"done", "completed", "closed", "resolved", "cancelled", "canceled", "abandoned", "obsolete", "dropped", "wontfix"}

// IsClosed reports whether a status takes a goal or task out of the
// standing material.
func IsClosed(status string) bool {
	return slices.Contains(ClosedStatus, strings.ToLower(strings.TrimSpace(status)))
}
