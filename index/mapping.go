package index

import (
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bleveapi "github.com/blevesearch/bleve_index_api"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Field names in the bleve index. The document's bleve id is its path.
const (
	fieldID      = "id"
	fieldText    = "text"
	fieldKind    = "kind"
	fieldScope   = "scope"
	fieldProject = "project"
	fieldRole    = "role"
	fieldTags    = "tags"
	fieldCreated = "created_at"
	fieldPin     = "pin"
	// fieldTime is created_at as a term that sorts as the time does, with
	// doc values for sorting; spans names the fields of its prefixes, the
	// spans of time it falls in. See timeRange.
	fieldTime = "time"
)

// textAnalyzer analyses bodies and query text alike: English, with
// possessives and stop words removed and Porter stemming, so that
// "deploying" finds "deployed" and a question finds statements.
const textAnalyzer = en.AnalyzerName

// newMapping is the lean mapping: one analysed text field with term
// frequencies and norms (BM25 needs them) but no term vectors (those serve
// phrase queries and highlighting); keyword fields for the filters without
// norms; created_at as a time key with doc values, the one field results
// are sorted by, and the span it falls in (timeRange). No _all field,
// nothing dynamic. Stored are only what ranking
// needs and the path does not tell: the entry id, its project and
// created_at (the path is the bleve id); callers read the file for the rest.
// Storing those three costs about 6% of the index's size and a tenth of a
// millisecond per query, far less than loading 30 candidate files.
func newMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bleveapi.BM25Scoring
	im.DefaultAnalyzer = textAnalyzer
	im.DefaultField = fieldText
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	text := bleve.NewTextFieldMapping()
	text.Analyzer = textAnalyzer
	text.Store = false
	text.IncludeTermVectors = false
	text.IncludeInAll = false
	text.DocValues = false

	keyword := func(store bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store = store
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		f.SkipFreqNorm = true
		return f
	}
	// The id is stored, not indexed: writers look a memory up by id (or
	// by its text's hash) in the vector rows (Finder), and a hundred
	// thousand terms of one entry each would only slow every build.
	id := keyword(true)
	id.Index = false

	created := bleve.NewDateTimeFieldMapping()
	created.Store = true
	created.Index = false
	created.IncludeInAll = false
	created.DocValues = false
	timeField := keyword(false)
	timeField.DocValues = true // the sort of searches without text

	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldID, id)
	dm.AddFieldMappingsAt(fieldText, text)
	dm.AddFieldMappingsAt(fieldKind, keyword(false))
	dm.AddFieldMappingsAt(fieldScope, keyword(false))
	dm.AddFieldMappingsAt(fieldProject, keyword(true))
	dm.AddFieldMappingsAt(fieldRole, keyword(false))
	dm.AddFieldMappingsAt(fieldTags, keyword(false))
	dm.AddFieldMappingsAt(fieldCreated, created)
	dm.AddFieldMappingsAt(fieldPin, keyword(false))
	dm.AddFieldMappingsAt(fieldTime, timeField)
	for _, l := range spans {
		dm.AddFieldMappingsAt(l.field, keyword(false))
	}
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	im.DefaultMapping = dm
	return im
}

// bleveDoc is the value handed to the mapping for one entry. Empty fields
// are left out so that they index no empty term.
func bleveDoc(d Doc) map[string]any {
	text := d.Text
	if d.Context != "" {
		text += "\n" + d.Context
	}
	m := map[string]any{fieldID: d.ID, fieldText: text}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set(fieldKind, d.Kind)
	set(fieldScope, d.Scope)
	set(fieldProject, d.Project)
	set(fieldRole, d.Role)
	set(fieldPin, d.Pin)
	if len(d.Tags) > 0 {
		m[fieldTags] = d.Tags
	}
	if !d.CreatedAt.IsZero() {
		m[fieldCreated] = d.CreatedAt.UTC()
		k := timeKey(d.CreatedAt)
		m[fieldTime] = k
		for _, l := range spans {
			m[l.field] = k[:l.digits]
		}
	}
	return m
}

// errBusy is what opening the bleve index returns while another process
// holds the lock we need for longer than the timeout.
var errBusy = errors.New("index is busy")

// createBleve makes a new, empty bleve index at dir. With unsafe, batches
// return before they are persisted (see Index.unsafeBatches).
func createBleve(dir string, lockTimeout time.Duration, unsafe bool) (bleve.Index, error) {
	quietLogs()
	return bleve.NewUsing(dir, newMapping(), scorch.Name, scorch.Name, map[string]any{
		"bolt_timeout":           lockTimeout.String(),
		"unsafe_batch":           unsafe,
		"asyncErrorCallbackName": asyncCallback,
	})
}

// openBleve opens the bleve index at dir, read-only or for writing, waiting
// at most lockTimeout for another process's lock. A timeout is errBusy;
// any other failure means the index is damaged.
func openBleve(dir string, readOnly bool, lockTimeout time.Duration) (bleve.Index, error) {
	quietLogs()
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		return nil, damaged("open bleve index: %w", err)
	}
	// The configuration given at creation is stored with the index and
	// merged under this one: unsafe batches, used while building a
	// generation, must not outlive the build.
	cfg := map[string]any{"bolt_timeout": lockTimeout.String(), "unsafe_batch": false, "asyncErrorCallbackName": asyncCallback}
	if readOnly {
		cfg["read_only"] = true
	}
	if err := verifySegments(dir, lockTimeout); err != nil {
		return nil, err
	}
	var bi bleve.Index
	err := safely("open bleve index", func() error {
		var e error
		bi, e = bleve.OpenUsing(dir, cfg)
		return e
	})
	var d *damagedError
	if errors.As(err, &d) {
		return nil, err
	}
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, errBusy
	}
	if err != nil {
		return nil, damaged("open bleve index: %w", err)
	}
	return bi, nil
}

var quietOnce sync.Once

// quietLogs keeps scorch's messages off stderr. Scorch writes a few
// diagnostics through the standard log package (bleve's own loggers already
// discard), and a package must not print. The filter is installed on the
// standard logger once and drops only lines logged from bleve's packages;
// everything else passes to the writer that was there before.
func quietLogs() {
	quietOnce.Do(func() {
		log.SetOutput(&bleveLogFilter{next: log.Writer()})
	})
}

type bleveLogFilter struct {
	next interface{ Write([]byte) (int, error) }
}

func (w *bleveLogFilter) Write(p []byte) (int, error) {
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "github.com/blevesearch/") {
			return len(p), nil
		}
		if !more {
			break
		}
	}
	return w.next.Write(p)
}

// spans are the prefixes of its time key an entry is also indexed under,
// longest first: the first 2, 3, 4 and 5 hex digits, spans of 2^56 ns
// (2.3 years), 2^52 (52 days), 2^48 (3.3 days) and 2^44 (4.9 hours). See
// timeRange.
var spans = [...]struct {
	field  string
	digits int
}{{"span2y", 2}, {"span52d", 3}, {"span3d", 4}, {"span5h", 5}}

// timeKey is t as 16 hex digits that sort as the times do: its Unix
// nanoseconds with the sign bit flipped.
func timeKey(t time.Time) string {
	ns := int64(math.MinInt64) // before 1678: the first key
	switch {
	case t.After(maxKeyTime):
		ns = math.MaxInt64
	case !t.Before(minKeyTime):
		ns = t.UnixNano()
	}
	return fmt.Sprintf("%016x", uint64(ns)^1<<63)
}

// The times Unix nanoseconds can hold; a time key outside is the nearest.
var (
	minKeyTime = time.Unix(0, math.MinInt64)
	maxKeyTime = time.Unix(0, math.MaxInt64)
)
