package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/miramem/mira/internal/openaicompat"
	"github.com/miramem/mira/internal/retry"
)

// defaultRerankTimeout bounds one rerank attempt when RerankConfig.Timeout
// is not set.
const defaultRerankTimeout = time.Minute

// maxRerankReply bounds the reply read into memory. A scores-only reply is
// a few bytes per document; servers that echo the documents need more.
const maxRerankReply = 32 << 20

// RerankConfig configures a Reranker. BaseURL is the API root that
// "/rerank" is appended to, usually ending in /v1:
// "http://localhost:8080/v1" (llama.cpp server started with --reranking),
// "https://api.jina.ai/v1"; it is required, with no default. Model is the
// reranking model's name, e.g. "jina-reranker-v2-base-multilingual":
// hosted services need it, llama.cpp ignores it, and an empty name is left
// out of the request. Timeout bounds each attempt (default 1 min);
// MaxRetries defaults to 5 and Backoff to 500 ms. The other fields are as
// for every client of an OpenAI-compatible server.
type RerankConfig = openaicompat.Config

// Reranker scores documents against a query with a cross-encoder served
// at POST {BaseURL}/rerank, the API of the llama.cpp server, Jina, and
// Cohere-compatible proxies. Scores are comparable within one call only:
// some servers return probabilities, others raw logits (llama.cpp), so a
// caller should rank by them rather than threshold them.
//
// Reranker is safe for concurrent use.
type Reranker struct {
	url     string
	key     string
	model   string
	hc      *http.Client
	retry   retry.Policy
	timeout time.Duration
	err     error // a configuration error, reported by every Rerank
}

// NewReranker returns a reranker for cfg. It does not contact the server;
// a bad BaseURL is reported by the first Rerank.
func NewReranker(cfg RerankConfig) *Reranker {
	r := &Reranker{
		url:     openaicompat.Endpoint(cfg.BaseURL, "/rerank"),
		key:     cfg.APIKey,
		model:   cfg.Model,
		hc:      cfg.HTTPClient,
		retry:   retry.New(defaultMaxRetries, defaultBackoff).Override(cfg.MaxRetries, cfg.Backoff),
		timeout: cfg.Timeout,
	}
	if err := openaicompat.CheckBaseURL(cfg.BaseURL); err != nil {
		r.err = fmt.Errorf("reranker: %w", err)
	}
	if r.hc == nil {
		r.hc = &http.Client{}
	}
	if r.timeout <= 0 {
		r.timeout = defaultRerankTimeout
	}
	return r
}

// rerankRequest is the request body. return_documents is false so that
// servers that would echo every document (Jina, Cohere v1) send only the
// scores; servers without the field ignore it.
type rerankRequest struct {
	Model           string   `json:"model,omitempty"`
	Query           string   `json:"query"`
	Documents       []string `json:"documents"`
	TopN            int      `json:"top_n"`
	ReturnDocuments bool     `json:"return_documents"`
}

// rerankResult is one scored document. Most servers call the score
// "relevance_score"; text-embeddings-inference and proxies modelled on it
// call it "score".
type rerankResult struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

// Rerank returns one relevance score per document, in the order of docs
// (servers reply sorted by score; the reply's "index" puts them back).
// Higher is more relevant. No request is sent for no documents.
func (r *Reranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	if r.err != nil {
		return nil, r.err
	}
	if len(docs) == 0 {
		return []float64{}, nil
	}
	body, err := json.Marshal(rerankRequest{
		Model: r.model, Query: query, Documents: docs, TopN: len(docs),
	})
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	var reply []byte
	err = r.retry.Do(ctx, func(ctx context.Context) error {
		var perr error
		reply, perr = r.post(ctx, body)
		return perr
	})
	if err != nil {
		return nil, fmt.Errorf("rerank at %s: %w", r.url, err)
	}
	scores, err := parseRerank(reply, len(docs))
	if err != nil {
		return nil, fmt.Errorf("rerank at %s: %w", r.url, err)
	}
	return scores, nil
}

// post sends one attempt and returns the body of a successful reply.
func (r *Reranker) post(ctx context.Context, body []byte) ([]byte, error) {
	actx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, retry.Transport(err, actx, r.timeout)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxRerankReply+1))
	if err != nil {
		return nil, retry.Transport(fmt.Errorf("reading reply: %w", err), actx, r.timeout)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, retry.StatusFailure(retry.ParseReply(resp.StatusCode, reply), resp.Header, httpError)
	}
	if len(reply) > maxRerankReply {
		return nil, fmt.Errorf("reply larger than %d MiB", maxRerankReply>>20)
	}
	return reply, nil
}

// parseRerank reads the scores of n documents from a reply: an object
// with "results", or a bare array of results (text-embeddings-inference).
func parseRerank(reply []byte, n int) ([]float64, error) {
	var results []rerankResult
	if t := bytes.TrimSpace(reply); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &results); err != nil {
			return nil, fmt.Errorf("unreadable reply: %w", err)
		}
	} else {
		var obj struct {
			Results *[]rerankResult `json:"results"`
		}
		if err := json.Unmarshal(t, &obj); err != nil {
			return nil, fmt.Errorf("unreadable reply: %w", err)
		}
		if obj.Results == nil {
			return nil, fmt.Errorf("reply has no results: %s", clip(string(t)))
		}
		results = *obj.Results
	}
	if len(results) != n {
		return nil, fmt.Errorf("server scored %d of %d documents", len(results), n)
	}
	scores := make([]float64, n)
	seen := make([]bool, n)
	for _, res := range results {
		if res.Index == nil {
			return nil, errors.New("reply has a result without an index")
		}
		i := *res.Index
		if i < 0 || i >= n {
			return nil, fmt.Errorf("reply has a score for index %d of %d documents", i, n)
		}
		if seen[i] {
			return nil, fmt.Errorf("reply has two scores for index %d", i)
		}
		switch {
		case res.RelevanceScore != nil:
			scores[i] = *res.RelevanceScore
		case res.Score != nil:
			scores[i] = *res.Score
		default:
			return nil, fmt.Errorf("reply has no score for index %d", i)
		}
		seen[i] = true
	}
	return scores, nil
}
