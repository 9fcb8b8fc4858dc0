package agentloop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/miramem/mira/internal/text"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/agentloop/tools"
	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/mem"
)

// ViewStore is a Store that keeps which turns of a conversation's buffer
// its model no longer sees: those that Prune and Clear left out. The turns
// themselves stay in the store, and in its history. *mira.Memory
// satisfies it; with a Store that does not, Prune and Clear are refused.
type ViewStore interface {
	// BufferView returns what SetBufferView last recorded for the
	// conversation, nil when nothing.
	BufferView(scope string) ([]byte, error)
	// SetBufferView records it.
	SetBufferView(scope string, data []byte) error
}

// bufferView is what a ViewStore keeps, as JSON.
type bufferView struct {
	// ClearedThrough is the last turn Clear left out: it and every turn
	// before it are not shown.
	ClearedThrough string `json:"cleared_through,omitempty"`
	// Pruned are turns Prune left out.
	Pruned  []string  `json:"pruned,omitempty"`
	Updated time.Time `json:"updated"`
}

// viewStore returns the store as a ViewStore, if it is one.
func (a *Agent) viewStore() (ViewStore, bool) {
	vs, ok := a.cfg.Store.(ViewStore)
	return vs, ok
}

// readView reads the buffer view; none is the zero view.
func (a *Agent) readView() (bufferView, error) {
	var v bufferView
	vs, ok := a.viewStore()
	if !ok {
		return v, nil
	}
	data, err := vs.BufferView(a.cfg.Conversation)
	if err != nil || data == nil {
		return v, err
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return bufferView{}, fmt.Errorf("buffer view of conversation %s: %w", a.cfg.Conversation, err)
	}
	return v, nil
}

// writeView records v, keeping only the turns still in buf (the turns
// since the summary): summarized turns leave the buffer anyway.
func (a *Agent) writeView(v bufferView, buf []*mem.Entry) error {
	vs, ok := a.viewStore()
	if !ok {
		return errors.New("this store keeps no buffer view")
	}
	in := map[string]bool{}
	for _, e := range buf {
		in[e.ID] = true
	}
	if !in[v.ClearedThrough] {
		v.ClearedThrough = ""
	}
	v.Pruned = slices.DeleteFunc(v.Pruned, func(id string) bool { return !in[id] })
	slices.Sort(v.Pruned)
	v.Pruned = slices.Compact(v.Pruned)
	// To the nanosecond: a change made within the same second by
	// another process must still be told apart.
	v.Updated = time.Now().UTC()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := vs.SetBufferView(a.cfg.Conversation, append(data, '\n')); err != nil {
		return fmt.Errorf("record the buffer view: %w", err)
	}
	return nil
}

// visible returns the turns of buf the model sees: those after the last
// Clear that Prune did not leave out. A view that cannot be read is
// reported and ignored: the model then sees every turn.
func (a *Agent) visible(buf []*mem.Entry) []*mem.Entry {
	v, err := a.readView()
	if err != nil {
		a.cfg.Warn(err)
		return buf
	}
	a.viewAt = v.Updated
	return v.apply(buf)
}

// viewMoved reports whether the buffer view was recorded anew since the
// agent loaded it: another mira-agent pruned or cleared the conversation.
func (a *Agent) viewMoved() bool {
	v, err := a.readView()
	return err == nil && !v.Updated.Equal(a.viewAt)
}

func (v bufferView) apply(buf []*mem.Entry) []*mem.Entry {
	if v.ClearedThrough != "" {
		if i := slices.IndexFunc(buf, func(e *mem.Entry) bool { return e.ID == v.ClearedThrough }); i >= 0 {
			buf = buf[i+1:]
		}
	}
	if len(v.Pruned) == 0 {
		return buf
	}
	return slices.DeleteFunc(slices.Clone(buf), func(e *mem.Entry) bool {
		_, found := slices.BinarySearch(v.Pruned, e.ID)
		return found
	})
}

// storeBuffer reads the turns since the summary as the store has them,
// the ones the model does not see included.
func (a *Agent) storeBuffer() ([]*mem.Entry, error) {
	state, err := a.cfg.Store.Conversation(a.cfg.Conversation, a.cfg.Warn)
	if err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", a.cfg.Conversation, err)
	}
	return state.Buffer, nil
}

// Message is a turn since the summary, as /context messages lists it.
type Message struct {
	ID      string    `json:"id"`
	Role    string    `json:"role"`
	Created time.Time `json:"created"`
	// Path is the turn's file in the store.
	Path   string `json:"path"`
	Tokens int    `json:"tokens"`
	Text   string `json:"text"`
	// Tool is the tool a result came from; Calls the tools a reply
	// called.
	Tool      string   `json:"tool,omitempty"`
	Calls     []string `json:"calls,omitempty"`
	IsError   bool     `json:"is_error,omitempty"`
	Artifacts []string `json:"artifacts,omitempty"`
	// Shown reports whether the model sees the turn: false for one that
	// Prune or Clear left out.
	Shown bool `json:"shown"`
}

// Roles are the roles of turns, as Messages filters them.
var Roles = []string{roleUser, roleAssistant, roleTool}

// Messages lists the turns since the summary, oldest first: those of role
// only when it is not "", the last n only when n > 0. Turns the model no
// longer sees are listed too, marked.
func (a *Agent) Messages(role string, last int) ([]Message, error) {
	if role != "" && !slices.Contains(Roles, role) {
		return nil, fmt.Errorf("role %q: a role is one of %s", role, strings.Join(Roles, ", "))
	}
	if last < 0 {
		return nil, errors.New("the number of messages must not be negative")
	}
	if err := a.refresh(); err != nil {
		return nil, err
	}
	buf, err := a.storeBuffer()
	if err != nil {
		return nil, err
	}
	shown := map[string]bool{}
	for _, e := range a.buffer {
		shown[e.ID] = true
	}
	var out []Message
	for _, e := range buf {
		if role != "" && e.Role != role {
			continue
		}
		out = append(out, a.message(e, shown[e.ID]))
	}
	if last > 0 && len(out) > last {
		out = out[len(out)-last:]
	}
	return out, nil
}

func (a *Agent) message(e *mem.Entry, shown bool) Message {
	m := Message{ID: e.ID, Role: e.Role, Created: e.CreatedAt, Path: e.Path, Tokens: a.turnTokens(e), Text: e.Body,
		Tool: stringField(e, fieldToolName), IsError: boolField(e, fieldIsError), Shown: shown}
	for _, c := range callsOf(e) {
		m.Calls = append(m.Calls, c.Function.Name)
	}
	if raw, ok := e.Fields()[fieldArtifacts].([]any); ok {
		for _, r := range raw {
			if s, ok := r.(string); ok {
				m.Artifacts = append(m.Artifacts, s)
			}
		}
	}
	return m
}

// Stats is what /context stats shows.
type Stats struct {
	Conversation string `json:"conversation"`
	// Messages counts the turns the model sees, by role; Hidden the turns
	// since the summary it does not see.
	Messages map[string]int `json:"messages"`
	Hidden   int            `json:"hidden"`
	// Artifacts counts the conversation's artifacts by type, and
	// ArtifactBytes their size.
	Artifacts     map[string]int `json:"artifacts"`
	ArtifactBytes int64          `json:"artifact_bytes"`
	// BufferTokens is the size of the turns the model sees since the
	// summary; BufferLimit the size past which they are summarized.
	BufferTokens int `json:"buffer_tokens"`
	BufferLimit  int `json:"buffer_limit"`
	// Usage is this session's, with its cost when prices are known;
	// ConversationUsage the conversation's, summed from what its replies
	// record, over every session.
	Usage             Usage             `json:"usage"`
	ConversationUsage ConversationUsage `json:"conversation_usage"`
	CacheHitRate      float64           `json:"cache_hit_rate"`
	// Summary is the rolling summary's id, "" before the first.
	Summary string `json:"summary,omitempty"`
	// Created and Updated are the times of the conversation's first and
	// newest turns (zero for a conversation without turns).
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Stats counts the conversation's messages and artifacts (those arts
// holds; none when nil) and reports the buffer and the session's spend.
func (a *Agent) Stats(arts *tools.Artifacts) (*Stats, error) {
	if err := a.refresh(); err != nil {
		return nil, err
	}
	buf, err := a.storeBuffer()
	if err != nil {
		return nil, err
	}
	st := a.Status()
	s := &Stats{
		Conversation: a.cfg.Conversation, Messages: map[string]int{}, Artifacts: map[string]int{},
		Hidden: len(buf) - len(a.buffer), BufferTokens: st.BufferTokens, BufferLimit: st.BufferLimit,
		Usage: st.Usage, CacheHitRate: st.Usage.CacheHitRate(),
	}
	if s.ConversationUsage, err = a.conversationUsage(); err != nil {
		return nil, err
	}
	for _, r := range Roles {
		s.Messages[r] = 0
	}
	for _, e := range a.buffer {
		s.Messages[e.Role]++
	}
	if st.Summary != nil {
		s.Summary = st.Summary.ID
	}
	paths, err := a.cfg.Store.TurnPaths(a.cfg.Conversation)
	if err != nil {
		return nil, fmt.Errorf("list the turns of conversation %s: %w", a.cfg.Conversation, err)
	}
	for _, p := range paths {
		ep, err := mem.ParsePath(p)
		if err != nil {
			continue
		}
		t, ok := ep.Created()
		if !ok {
			continue
		}
		if s.Created.IsZero() || t.Before(s.Created) {
			s.Created = t
		}
		if t.After(s.Updated) {
			s.Updated = t
		}
	}
	if arts != nil {
		list, err := arts.List()
		if err != nil {
			return nil, err
		}
		for _, m := range list {
			s.Artifacts[m.Type]++
			s.ArtifactBytes += m.Bytes
		}
	}
	return s, nil
}

// Clear starts the buffer afresh: the model no longer sees the turns since
// the summary, which goes on. The turns stay in the store. It returns how
// many turns the model no longer sees.
func (a *Agent) Clear() (int, error) {
	if err := a.refresh(); err != nil {
		return 0, err
	}
	if _, ok := a.viewStore(); !ok {
		return 0, errors.New("this store keeps no buffer view")
	}
	buf, err := a.storeBuffer()
	if err != nil {
		return 0, err
	}
	if len(buf) == 0 {
		return 0, nil
	}
	v, err := a.readView()
	if err != nil {
		a.cfg.Warn(err)
		v = bufferView{}
	}
	n := len(a.buffer)
	v.ClearedThrough, v.Pruned = buf[len(buf)-1].ID, nil
	if err := a.writeView(v, buf); err != nil {
		return 0, err
	}
	return n, a.load()
}

// Prune strategies.
const StrategyRelevance = "relevance"

// PruneOptions are Prune's options; zero fields take the defaults given.
type PruneOptions struct {
	// Strategy is how turns are chosen: relevance (the default, and the
	// only one).
	Strategy string
	// MaxTokens is the most the buffer keeps (half the buffer size).
	MaxTokens int
	// KeepRecent is how many of the newest turns are always kept (10).
	KeepRecent int
	// Task is the text whose words make a turn relevant: the newest user
	// message when empty.
	Task string
}

// PruneResult is what Prune did.
type PruneResult struct {
	// Pruned lists the turns left out, oldest first.
	Pruned                    []Message `json:"pruned"`
	KeptTurns                 int       `json:"kept_turns"`
	TokensBefore, TokensAfter int       `json:"-"`
	MaxTokens                 int       `json:"max_tokens"`
}

// Default of PruneOptions.KeepRecent.
const DefaultKeepRecent = 10

// Prune leaves the least relevant older turns out of what the model sees
// until the buffer holds at most opt.MaxTokens, keeping the newest
// opt.KeepRecent turns. A turn scores by recency (up to 100 points, one
// less per hour of age), role (user 100, assistant 50, tool 25), tool
// calls (50), success (25 unless a tool failed) and the share of the
// task's words it holds (up to 50). A reply and the results of its tool
// calls go or stay together. Pruned turns stay in the store.
func (a *Agent) Prune(opt PruneOptions) (*PruneResult, error) {
	if opt.Strategy == "" {
		opt.Strategy = StrategyRelevance
	}
	if opt.Strategy != StrategyRelevance {
		return nil, fmt.Errorf("strategy %q: the strategy there is is %s", opt.Strategy, StrategyRelevance)
	}
	if opt.MaxTokens < 0 || opt.KeepRecent < 0 {
		return nil, errors.New("max tokens and keep recent must not be negative")
	}
	if opt.MaxTokens == 0 {
		opt.MaxTokens = a.cfg.BufferTokens / 2
	}
	if opt.KeepRecent == 0 {
		opt.KeepRecent = DefaultKeepRecent
	}
	if err := a.refresh(); err != nil {
		return nil, err
	}
	if _, ok := a.viewStore(); !ok {
		return nil, errors.New("this store keeps no buffer view")
	}
	buf := a.buffer
	res := &PruneResult{TokensBefore: a.bufferTokens(), MaxTokens: opt.MaxTokens}
	if opt.Task == "" {
		for i := len(buf) - 1; i >= 0; i-- {
			if buf[i].Role == roleUser {
				opt.Task = buf[i].Body
				break
			}
		}
	}
	units := turnUnits(buf)
	// The newest KeepRecent turns stay, with the whole unit the oldest of
	// them is in.
	recent, n := len(units), 0
	for recent > 0 && n < opt.KeepRecent {
		recent--
		n += len(units[recent])
	}
	tokens := 0
	for _, u := range units[recent:] {
		for _, e := range u {
			tokens += a.turnTokens(e)
		}
	}
	words := taskWords(opt.Task)
	now := a.now()
	type scored struct {
		i      int
		score  float64
		tokens int
	}
	older := make([]scored, recent)
	for i, u := range units[:recent] {
		older[i] = scored{i: i, score: relevance(u, words, now)}
		for _, e := range u {
			older[i].tokens += a.turnTokens(e)
		}
	}
	slices.SortStableFunc(older, func(x, y scored) int { return cmp.Compare(y.score, x.score) })
	drop := map[int]bool{}
	for _, s := range older {
		if tokens+s.tokens <= opt.MaxTokens {
			tokens += s.tokens
		} else {
			drop[s.i] = true
		}
	}
	v, err := a.readView()
	if err != nil {
		return nil, err
	}
	for i, u := range units[:recent] {
		if !drop[i] {
			continue
		}
		for _, e := range u {
			v.Pruned = append(v.Pruned, e.ID)
			res.Pruned = append(res.Pruned, a.message(e, false))
		}
	}
	if len(res.Pruned) > 0 {
		all, err := a.storeBuffer()
		if err != nil {
			return nil, err
		}
		if err := a.writeView(v, all); err != nil {
			return nil, err
		}
		if err := a.load(); err != nil {
			return nil, err
		}
	}
	res.KeptTurns, res.TokensAfter = len(a.buffer), a.bufferTokens()
	return res, nil
}

// turnUnits groups turns into what is kept or pruned whole: a reply with
// the results of its tool calls, or a turn alone.
func turnUnits(buf []*mem.Entry) [][]*mem.Entry {
	var out [][]*mem.Entry
	for _, e := range buf {
		if e.Role == roleTool && len(out) > 0 {
			if last := out[len(out)-1]; last[0].Role == roleAssistant && len(callsOf(last[0])) > 0 {
				out[len(out)-1] = append(last, e)
				continue
			}
		}
		out = append(out, []*mem.Entry{e})
	}
	return out
}

// relevance scores a unit as Prune does.
func relevance(u []*mem.Entry, words []string, now time.Time) float64 {
	first := u[0]
	score := max(0, 100-now.Sub(first.CreatedAt).Hours())
	switch first.Role {
	case roleUser:
		score += 100
	case roleAssistant:
		score += 50
	default:
		score += 25
	}
	if len(callsOf(first)) > 0 {
		score += 50
	}
	failed := false
	var text strings.Builder
	for _, e := range u {
		failed = failed || boolField(e, fieldIsError)
		text.WriteString(strings.ToLower(e.Body))
		text.WriteByte('\n')
	}
	if !failed {
		score += 25
	}
	if len(words) > 0 {
		hits := 0
		for _, w := range words {
			if strings.Contains(text.String(), w) {
				hits++
			}
		}
		score += 50 * float64(hits) / float64(len(words))
	}
	return score
}

// taskWords are the words of a task that make a turn relevant: lower-case,
// three letters or more, each once.
func taskWords(task string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(task), func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127)
	}) {
		w = strings.Trim(w, ".-")
		if len([]rune(w)) >= 3 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// Added is what AddFile, AddFolder and AddSearch stored: the artifact and
// the turn that tells the model about it.
type Added struct {
	Artifact tools.Meta `json:"artifact"`
	Turn     string     `json:"turn"`
	Text     string     `json:"text"`
}

// AddFile stores the file as an artifact in arts and tells the model about
// it in a user turn, committed with it.
func (a *Agent) AddFile(ctx context.Context, arts *tools.Artifacts, file string, max int64) (*Added, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", file, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", file, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("add %s: a directory (add-folder adds its listing)", file)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("add %s: not a regular file", file)
	}
	if err := a.refresh(); err != nil {
		return nil, err
	}
	if arts == nil {
		return nil, errors.New("this session stores no artifacts")
	}
	m, rels, err := arts.SaveReader(f, tools.ArtifactFile, file, "txt", max)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", file, err)
	}
	return a.tell(ctx, arts, m, rels, fmt.Sprintf("the file %s", file))
}

// folderEntries bounds a folder's listing.
const folderEntries = 20000

// AddFolder stores the listing of dir (its files and directories with
// their sizes, .git left out) as an artifact and tells the model about it.
func (a *Agent) AddFolder(ctx context.Context, arts *tools.Artifacts, dir string) (*Added, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("add-folder %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("add-folder %s: not a directory (add adds a file)", dir)
	}
	if err := a.refresh(); err != nil {
		return nil, err
	}
	if arts == nil {
		return nil, errors.New("this session stores no artifacts")
	}
	var b strings.Builder
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p, err)
			return nil
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && d.Name() == ".git" {
			fmt.Fprintf(&b, "%s/ (not listed)\n", rel)
			return filepath.SkipDir
		}
		if n++; n > folderEntries {
			fmt.Fprintf(&b, "[… the listing stops after %d entries]\n", folderEntries)
			return filepath.SkipAll
		}
		switch {
		case d.IsDir():
			fmt.Fprintf(&b, "%s/\n", rel)
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, "%s -> %s\n", rel, target)
		default:
			if info, err := d.Info(); err == nil {
				fmt.Fprintf(&b, "%s  %d bytes\n", rel, info.Size())
			} else {
				fmt.Fprintf(&b, "%s\n", rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("add-folder %s: %w", dir, err)
	}
	if b.Len() == 0 {
		b.WriteString("(empty)\n")
	}
	m, rels, err := arts.SaveText(tools.Redact(b.String()), tools.ArtifactFolder, dir, "txt", 0)
	if err != nil {
		return nil, err
	}
	return a.tell(ctx, arts, m, rels, fmt.Sprintf("the listing of the folder %s", dir))
}

// searchResults is how many memories AddSearch stores.
const searchResults = 20

// AddSearch stores the memories that match query as an artifact and tells
// the model about them.
func (a *Agent) AddSearch(ctx context.Context, arts *tools.Artifacts, query string) (*Added, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("add-search needs a query")
	}
	if a.cfg.Library == nil {
		return nil, errors.New("this session has no memory store to search")
	}
	if err := a.refresh(); err != nil {
		return nil, err
	}
	if arts == nil {
		return nil, errors.New("this session stores no artifacts")
	}
	recs, err := a.cfg.Library.Relevant(ctx, query, searchResults)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Memories matching %q: %d\n", query, len(recs))
	for i, r := range recs {
		fmt.Fprintf(&b, "\n%d. %s (%s, scope %s, %s)\n%s\n", i+1, r.ID, r.Kind, r.Scope, r.CreatedAt.Format("2006-01-02"), strings.TrimSpace(r.Text))
	}
	m, rels, err := arts.SaveText(tools.Redact(b.String()), tools.ArtifactSearch, query, "txt", 0)
	if err != nil {
		return nil, err
	}
	return a.tell(ctx, arts, m, rels, fmt.Sprintf("%d memories found for %q", len(recs), query))
}

// tell stores the user turn that tells the model about an artifact the
// user added, committing the artifact with it.
func (a *Agent) tell(ctx context.Context, arts *tools.Artifacts, m tools.Meta, rels []string, what string) (*Added, error) {
	ref := "artifact://" + m.ID
	note := fmt.Sprintf("[I added %s to the conversation, stored as %s (%s, %s). Read it with read_file {\"path\": %q} or search it with grep when it matters.]",
		what, ref, plural(m.Lines, "line", "lines"), text.Size(m.Bytes), ref)
	if m.Truncated {
		note = strings.TrimSuffix(note, "]") + fmt.Sprintf(" Only its first %s were kept.]", text.Size(m.Bytes))
	}
	e := a.turn(roleUser, note)
	e.Extra[fieldArtifacts] = rels
	stored, err := a.store(ctx, e)
	if err != nil {
		// Not committed: the artifact goes too.
		for _, r := range rels {
			os.Remove(filepath.Join(arts.Store, filepath.FromSlash(r)))
		}
		return nil, err
	}
	a.push(stored)
	return &Added{Artifact: m, Turn: stored.ID, Text: stored.Body}, nil
}

// Export formats.
const (
	ExportJSON     = "json"
	ExportMarkdown = "markdown"
)

// ExportFormat returns the format of an export file by its extension:
// .json, or .md or .markdown.
func ExportFormat(file string) (string, error) {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".json":
		return ExportJSON, nil
	case ".md", ".markdown":
		return ExportMarkdown, nil
	}
	return "", fmt.Errorf("export %s: the file's name must end in .json or .md", file)
}

// Exported is the conversation as Export writes it in JSON.
type Exported struct {
	Conversation string    `json:"conversation"`
	Project      string    `json:"project,omitempty"`
	Exported     time.Time `json:"exported"`
	// Summary is the rolling summary's text, SummaryID its id.
	SummaryID string    `json:"summary_id,omitempty"`
	Summary   string    `json:"summary,omitempty"`
	Messages  []Message `json:"messages"`
}

// Export writes the conversation (the rolling summary and every turn since
// it, marked when the model no longer sees it) in format.
func (a *Agent) Export(w io.Writer, format string) error {
	if format != ExportJSON && format != ExportMarkdown {
		return fmt.Errorf("export format %q: json or markdown", format)
	}
	msgs, err := a.Messages("", 0)
	if err != nil {
		return err
	}
	x := Exported{Conversation: a.cfg.Conversation, Project: a.project.Name, Exported: a.now().UTC().Truncate(time.Second), Messages: msgs}
	if x.Messages == nil {
		x.Messages = []Message{}
	}
	if s := a.Status().Summary; s != nil {
		x.SummaryID, x.Summary = s.ID, s.Body
	}
	if format == ExportJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(x)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Conversation %s\n\nExported %s", x.Conversation, x.Exported.Format(time.RFC3339))
	if x.Project != "" {
		fmt.Fprintf(&b, ", project %s", x.Project)
	}
	b.WriteString(".\n")
	if x.Summary != "" {
		fmt.Fprintf(&b, "\n## Summary (%s)\n\n%s\n", x.SummaryID, strings.TrimSpace(x.Summary))
	}
	fmt.Fprintf(&b, "\n## Messages since the summary (%d)\n", len(x.Messages))
	for _, m := range x.Messages {
		head := m.Role
		if m.Tool != "" {
			head += " · " + m.Tool
		}
		fmt.Fprintf(&b, "\n### %s · %s · %s", head, m.Created.UTC().Format("2006-01-02 15:04:05"), m.ID)
		if !m.Shown {
			b.WriteString(" (not shown to the model)")
		}
		fmt.Fprintf(&b, "\n\n%s\n", strings.TrimSpace(m.Text))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// ExportFile writes the conversation to file, in the format its extension
// names, atomically and readable by the user alone (a conversation may be
// private).
func (a *Agent) ExportFile(file string) (string, error) {
	format, err := ExportFormat(file)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := a.Export(&b, format); err != nil {
		return "", err
	}
	if err := atomicfile.Write(file, []byte(b.String()), 0o600, true); err != nil {
		return "", fmt.Errorf("export %s: %w", file, err)
	}
	return format, nil
}
