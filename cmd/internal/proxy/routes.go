package proxy

import (
	"net/http"
	"slices"
	"strings"
)

// route is one route of the OpenAI API the proxy passes on: a path under
// /v1 whose {} segments stand for an id, and the methods the API takes
// on it. Multipart marks the uploads, whose bodies are
// multipart/form-data; every other body must be JSON.
type route struct {
	path      string
	methods   []string
	multipart bool
}

const (
	get  = http.MethodGet
	post = http.MethodPost
	del  = http.MethodDelete
)

// routes are the routes of the OpenAI API an OpenAI client calls (its
// organization and admin routes are not among them), and those that
// OpenAI-compatible servers add to /v1/models. Anything else is refused:
// the proxy lends the user's API key to what it passes on.
var routes = []route{
	{"/chat/completions", []string{get, post}, false},
	{"/chat/completions/{}", []string{get, post, del}, false},
	{"/chat/completions/{}/messages", []string{get}, false},
	{"/completions", []string{post}, false},
	{"/embeddings", []string{post}, false},
	{"/moderations", []string{post}, false},
	{"/models", []string{get}, false},
	{"/models/{...}", []string{get, del}, false},
	{"/responses", []string{post}, false},
	{"/responses/input_tokens", []string{post}, false},
	{"/responses/compact", []string{post}, false},
	{"/responses/{}", []string{get, del}, false},
	{"/responses/{}/cancel", []string{post}, false},
	{"/responses/{}/input_items", []string{get}, false},
	{"/conversations", []string{post}, false},
	{"/conversations/{}", []string{get, post, del}, false},
	{"/conversations/{}/items", []string{get, post}, false},
	{"/conversations/{}/items/{}", []string{get, del}, false},
	{"/audio/speech", []string{post}, false},
	{"/audio/transcriptions", []string{post}, true},
	{"/audio/translations", []string{post}, true},
	{"/images/generations", []string{post}, false},
	{"/images/edits", []string{post}, true},
	{"/images/variations", []string{post}, true},
	{"/files", []string{get, post}, true},
	{"/files/{}", []string{get, del}, false},
	{"/files/{}/content", []string{get}, false},
	{"/uploads", []string{post}, false},
	{"/uploads/{}/parts", []string{post}, true},
	{"/uploads/{}/complete", []string{post}, false},
	{"/uploads/{}/cancel", []string{post}, false},
	{"/batches", []string{get, post}, false},
	{"/batches/{}", []string{get}, false},
	{"/batches/{}/cancel", []string{post}, false},
	{"/vector_stores", []string{get, post}, false},
	{"/vector_stores/{}", []string{get, post, del}, false},
	{"/vector_stores/{}/search", []string{post}, false},
	{"/vector_stores/{}/files", []string{get, post}, false},
	{"/vector_stores/{}/files/{}", []string{get, post, del}, false},
	{"/vector_stores/{}/files/{}/content", []string{get}, false},
	{"/vector_stores/{}/file_batches", []string{post}, false},
	{"/vector_stores/{}/file_batches/{}", []string{get}, false},
	{"/vector_stores/{}/file_batches/{}/cancel", []string{post}, false},
	{"/vector_stores/{}/file_batches/{}/files", []string{get}, false},
	{"/fine_tuning/jobs", []string{get, post}, false},
	{"/fine_tuning/jobs/{}", []string{get}, false},
	{"/fine_tuning/jobs/{}/cancel", []string{post}, false},
	{"/fine_tuning/jobs/{}/pause", []string{post}, false},
	{"/fine_tuning/jobs/{}/resume", []string{post}, false},
	{"/fine_tuning/jobs/{}/events", []string{get}, false},
	{"/fine_tuning/jobs/{}/checkpoints", []string{get}, false},
	{"/evals", []string{get, post}, false},
	{"/evals/{}", []string{get, post, del}, false},
	{"/evals/{}/runs", []string{get, post}, false},
	{"/evals/{}/runs/{}", []string{get, post, del}, false},
	{"/evals/{}/runs/{}/output_items", []string{get}, false},
	{"/evals/{}/runs/{}/output_items/{}", []string{get}, false},
	{"/containers", []string{get, post}, false},
	{"/containers/{}", []string{get, del}, false},
	{"/containers/{}/files", []string{get, post}, true},
	{"/containers/{}/files/{}", []string{get, del}, false},
	{"/containers/{}/files/{}/content", []string{get}, false},
	{"/videos", []string{get, post}, true},
	{"/videos/{}", []string{get, del}, false},
	{"/videos/{}/content", []string{get}, false},
	{"/videos/{}/remix", []string{post}, false},
	{"/realtime/sessions", []string{post}, false},
	{"/realtime/transcription_sessions", []string{post}, false},
	{"/realtime/client_secrets", []string{post}, false},
	{"/assistants", []string{get, post}, false},
	{"/assistants/{}", []string{get, post, del}, false},
	{"/threads", []string{post}, false},
	{"/threads/runs", []string{post}, false},
	{"/threads/{}", []string{get, post, del}, false},
	{"/threads/{}/messages", []string{get, post}, false},
	{"/threads/{}/messages/{}", []string{get, post, del}, false},
	{"/threads/{}/runs", []string{get, post}, false},
	{"/threads/{}/runs/{}", []string{get, post}, false},
	{"/threads/{}/runs/{}/cancel", []string{post}, false},
	{"/threads/{}/runs/{}/submit_tool_outputs", []string{post}, false},
	{"/threads/{}/runs/{}/steps", []string{get}, false},
	{"/threads/{}/runs/{}/steps/{}", []string{get}, false},
}

// findRoute finds the route of path (under /v1); nil when the API has
// none.
func findRoute(path string) *route {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return nil
	}
	segs := strings.Split(rest, "/")
	for _, s := range segs {
		if !validSegment(s) {
			return nil
		}
	}
	for i := range routes {
		if matchRoute(strings.Split(strings.TrimPrefix(routes[i].path, "/"), "/"), segs) {
			return &routes[i]
		}
	}
	return nil
}

// matchRoute matches a route's segments against a path's; "{}" is any
// one segment, "{...}" the rest of the path (a model's name can hold
// slashes).
func matchRoute(pat, segs []string) bool {
	for i, p := range pat {
		if p == "{...}" {
			return i < len(segs)
		}
		if i >= len(segs) || (p != "{}" && p != segs[i]) {
			return false
		}
	}
	return len(pat) == len(segs)
}

// validSegment says whether s can be one segment of a route: not empty,
// not . or .., no control characters.
func validSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' })
}

// allows says whether the route takes method.
func (rt *route) allows(method string) bool {
	return slices.Contains(rt.methods, method)
}
