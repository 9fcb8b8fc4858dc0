package embed

import (
	"time"

	"github.com/miramem/mira/internal/openaicompat"
	"github.com/miramem/mira/internal/retry"
	"github.com/miramem/mira/internal/text"
)

// Retry defaults of the HTTP clients (OpenAI, Reranker).
const (
	defaultMaxRetries = 5
	defaultBackoff    = 500 * time.Millisecond
)

// HTTPError is a reply with a failing HTTP status from an embedding or
// rerank server. Callers can tell a refused key (401, 403) from a missing
// model (404) or a bad request (400) by its StatusCode. Its message reads
// "server replied 401 Unauthorized: <message>", with a hint on the usual
// cause of a 404 or 405.
type HTTPError = openaicompat.HTTPError

// httpError makes the error of a failing reply.
func httpError(r retry.Reply) error { return openaicompat.NewHTTPError(r) }

// maxQuote bounds the part of a reply quoted in an error, so that an
// unexpected page does not flood the terminal.
const maxQuote = 300

// clip shortens s to maxQuote bytes on a rune boundary, marking the cut.
func clip(s string) string { return text.Shorten(s, maxQuote) }
