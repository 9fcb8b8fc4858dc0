package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miramem/mira/internal/openaicompat"
	"github.com/miramem/mira/internal/retry"
	openai "github.com/sashabaranov/go-openai"
)

// DefaultOpenAIBaseURL is the base URL used when OpenAIConfig.BaseURL is
// empty.
const DefaultOpenAIBaseURL = openaicompat.DefaultBaseURL

// Defaults of OpenAIConfig.
const (
	defaultBatchSize    = 64
	defaultEmbedTimeout = 2 * time.Minute
)

// ErrDimensionMismatch is wrapped by the error of an embedding reply whose
// vectors do not have the expected length: the configured dimension, the
// one learned from earlier replies, or that of the other vectors in the
// same reply. Vectors of another length cannot go into the same index, so
// the index must be rebuilt for the new model (or the model changed back).
var ErrDimensionMismatch = errors.New("embedding dimension mismatch")

// OpenAIConfig configures an OpenAI embedder.
type OpenAIConfig struct {
	// BaseURL is the API root that "/embeddings" is appended to, usually
	// ending in /v1: "https://api.openai.com/v1" (the default),
	// "http://localhost:11434/v1" (Ollama), "http://localhost:8080/v1"
	// (llama.cpp server, vLLM). Nothing is appended to it automatically,
	// so proxies with other prefixes work too.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization
	// header, which local servers accept.
	APIKey string
	// Model is the model name the server knows, e.g.
	// "text-embedding-3-small" or "nomic-embed-text". Required.
	Model string
	// Dim is the vector length the caller's index expects; a reply of
	// another length is an error. 0 learns it from the first reply (see
	// OpenAI.Probe).
	Dim int
	// RequestDim sends Dim as the request's "dimensions" field, asking the
	// server to shorten its vectors to Dim. Only models trained for it
	// accept it (OpenAI's text-embedding-3 family, some models on vLLM);
	// other servers reject the request or ignore the field, so it is off
	// by default.
	RequestDim bool
	// BatchSize is the largest number of texts sent in one request
	// (default 64).
	BatchSize int
	// MaxRetries is how often a request that failed with 429, a 5xx other
	// than 501, or a network error is repeated (default 5; negative means
	// never).
	MaxRetries int
	// Backoff is the wait before the first retry, doubled for each later
	// one up to 30 s, with jitter (default 500 ms). A Retry-After header
	// overrides it.
	Backoff time.Duration
	// Timeout bounds each attempt, not the whole call: a batch that takes
	// longer is abandoned and retried (default 2 min, since a CPU-only
	// local server can take that long for a full batch). The caller's
	// context bounds the whole call.
	Timeout time.Duration
	// HTTPClient sends the requests (default: a plain http.Client).
	HTTPClient *http.Client
}

// endpoint returns the settings cfg shares with the other clients of
// OpenAI-compatible servers.
func (cfg OpenAIConfig) endpoint() openaicompat.Config {
	return openaicompat.Config{
		BaseURL:    cfg.BaseURL,
		APIKey:     cfg.APIKey,
		Model:      cfg.Model,
		Timeout:    cfg.Timeout,
		MaxRetries: cfg.MaxRetries,
		Backoff:    cfg.Backoff,
		HTTPClient: cfg.HTTPClient,
	}
}

// OpenAI is an Embedder backed by a server speaking the OpenAI embeddings
// API: POST {BaseURL}/embeddings with {"model", "input": [...]}, answered
// by {"data": [{"index", "embedding"}], "usage"}. OpenAI, Ollama, the
// llama.cpp server and vLLM all serve it. Texts are sent BatchSize at a
// time, one batch after another (local servers process them one at a
// time anyway, and it keeps within rate limits); vectors are put back in
// input order by the reply's "index" and scaled to unit length, so the dot
// product is the cosine.
//
// A text that is empty or only white space is not sent and gets the zero
// vector, as the Embedder contract asks of a text with no words. OpenAI
// rejects empty input outright and other servers embed it as noise, so
// sending a placeholder would only put meaningless vectors in the index.
//
// OpenAI is safe for concurrent use.
type OpenAI struct {
	model   string
	client  *openai.Client
	retry   retry.Policy
	batch   int
	timeout time.Duration
	fixed   bool // the dimension was configured, not learned
	reqDim  bool
	dim     atomic.Int64
}

// NewOpenAI returns an embedder for cfg. It does not contact the server;
// call Probe to learn the dimension (and check the configuration) early.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai embedder: no model name")
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("openai embedder: negative dimension %d", cfg.Dim)
	}
	if cfg.RequestDim && cfg.Dim == 0 {
		return nil, errors.New("openai embedder: RequestDim needs a dimension")
	}
	oc, err := cfg.endpoint().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("openai embedder: %w", err)
	}
	o := &OpenAI{
		model:   cfg.Model,
		client:  openai.NewClientWithConfig(oc),
		retry:   retry.New(defaultMaxRetries, defaultBackoff).Override(cfg.MaxRetries, cfg.Backoff),
		batch:   cfg.BatchSize,
		timeout: cfg.Timeout,
		fixed:   cfg.Dim > 0,
		reqDim:  cfg.RequestDim,
	}
	if o.batch <= 0 {
		o.batch = defaultBatchSize
	}
	if o.timeout <= 0 {
		o.timeout = defaultEmbedTimeout
	}
	o.dim.Store(int64(cfg.Dim))
	return o, nil
}

// ID returns "openai:<model>/<dim>", e.g.
// "openai:text-embedding-3-small/1536". The prefix names the protocol, as
// MIRA_EMBED does, so the same model served by Ollama, llama.cpp or vLLM
// has the same ID.
//
// The server's address is left out on purpose. Moving a server, putting a
// proxy in front of it or writing 127.0.0.1 for localhost does not change
// a single vector, and an ID that changed with it would throw away and
// recompute a whole index for nothing. What does change vectors under the
// same name (a re-pulled Ollama tag, another quantisation of the same GGUF,
// a llama.cpp server that ignores the model name and serves whatever it
// loaded) is not caught by the address either, since it happens on the
// same host; name such models precisely (e.g. "nomic-embed-text:v1.5-q8_0"
// as an alias on the server). A changed dimension is always caught.
//
// Until the dimension is known (Dim 0 in the configuration and no reply
// yet) the ID ends in "/0", which no index built with real vectors has.
func (o *OpenAI) ID() string { return fmt.Sprintf("openai:%s/%d", o.model, o.Dim()) }

// Dim returns the vector length: the configured one, or the one learned
// from the first reply, or 0 before that.
func (o *OpenAI) Dim() int { return int(o.dim.Load()) }

// Probe returns the vector length, embedding one short text to learn it if
// it is not known yet. It is the way to get a final ID before the first
// Embed, and a cheap check that the server, key and model work.
func (o *OpenAI) Probe(ctx context.Context) (int, error) {
	if d := o.Dim(); d > 0 {
		return d, nil
	}
	if _, err := o.embedBatch(ctx, []string{"dimension probe"}); err != nil {
		return 0, fmt.Errorf("probe openai model %q: %w", o.model, err)
	}
	return o.Dim(), nil
}

// Embed returns one unit vector per text, in order; blank texts get the
// zero vector. The texts are sent in batches of BatchSize; if one fails
// after its retries, Embed returns its error and no vectors.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	send := make([]int, 0, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			send = append(send, i)
		}
	}
	out := make([][]float32, len(texts))
	batches := (len(send) + o.batch - 1) / o.batch
	for b := range batches {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed with openai model %q: %w", o.model, err)
		}
		idx := send[b*o.batch : min((b+1)*o.batch, len(send))]
		batch := make([]string, len(idx))
		for j, i := range idx {
			batch[j] = texts[i]
		}
		vecs, err := o.embedBatch(ctx, batch)
		if err != nil {
			if batches > 1 {
				return nil, fmt.Errorf("embed with openai model %q (batch %d of %d): %w", o.model, b+1, batches, err)
			}
			return nil, fmt.Errorf("embed with openai model %q: %w", o.model, err)
		}
		for j, i := range idx {
			out[i] = vecs[j]
		}
	}
	if len(send) < len(texts) {
		// Zero vectors need a length. Unless it was configured, only a
		// reply can tell it, and with nothing but blanks there was none.
		if _, err := o.Probe(ctx); err != nil {
			return nil, err
		}
		zero := allocVectors(len(texts)-len(send), o.Dim())
		for i := range out {
			if out[i] == nil {
				out[i], zero = zero[0], zero[1:]
			}
		}
	}
	return out, nil
}

// embedBatch sends one request (with retries) and returns its vectors in
// the order of batch, unit length, after checking their number and length.
func (o *OpenAI) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	req := openai.EmbeddingRequest{Input: batch, Model: openai.EmbeddingModel(o.model)}
	if o.reqDim {
		req.Dimensions = o.Dim()
	}
	var resp openai.EmbeddingResponse
	err := o.retry.Do(ctx, func(ctx context.Context) error {
		hctx, header := retry.RecordHeader(ctx)
		actx, cancel := context.WithTimeout(hctx, o.timeout)
		defer cancel()
		r, err := o.client.CreateEmbeddings(actx, req)
		if err != nil {
			return retry.Classify(err, header(), actx, o.timeout, httpError)
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Data) != len(batch) {
		return nil, fmt.Errorf("model %s returned %d vectors for %d texts", o.model, len(resp.Data), len(batch))
	}
	vecs := make([][]float32, len(batch))
	width := 0
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(batch) {
			return nil, fmt.Errorf("model %s returned a vector for index %d of a batch of %d", o.model, d.Index, len(batch))
		}
		if vecs[d.Index] != nil {
			return nil, fmt.Errorf("model %s returned two vectors for index %d", o.model, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("model %s returned an empty vector for index %d", o.model, d.Index)
		}
		if width == 0 {
			width = len(d.Embedding)
		} else if len(d.Embedding) != width {
			return nil, fmt.Errorf("%w: model %s returned vectors of %d and %d in one reply",
				ErrDimensionMismatch, o.model, width, len(d.Embedding))
		}
		normalize(d.Embedding)
		vecs[d.Index] = d.Embedding
	}
	if err := o.learnDim(width); err != nil {
		return nil, err
	}
	return vecs, nil
}

// learnDim checks a reply's vector length against the expected one, and
// makes it the expected one if there was none yet.
func (o *OpenAI) learnDim(got int) error {
	if o.dim.CompareAndSwap(0, int64(got)) {
		return nil
	}
	want := o.Dim()
	if got == want {
		return nil
	}
	if o.fixed {
		return fmt.Errorf("%w: model %s returned %d, index expects %d", ErrDimensionMismatch, o.model, got, want)
	}
	return fmt.Errorf("%w: model %s returned %d, earlier replies had %d", ErrDimensionMismatch, o.model, got, want)
}
