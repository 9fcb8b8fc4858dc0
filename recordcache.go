package mira

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/miramem/mira/mem"
)

// RecordCache keeps the records of the entry files a long-running process
// (the recall server) has read, for as long as the file's status says it
// is unchanged. Parsing the front matter of ten hits was a third of a
// served recall; checking that a file is unchanged is one stat call.
//
// A file is unchanged while its device, inode, size, modification time
// and status-change time all are; the last cannot be set back by anyone
// (touch -d, cp -p and editors change it too). A file changed in the
// last two seconds is not kept: a second write within the clock's tick
// could leave all five the same.
type RecordCache struct {
	mu sync.Mutex
	m  map[string]cachedRecord
}

type cachedRecord struct {
	key fileKey
	rec mem.Record
}

const maxCachedRecords = 20000

// racyWindow is a variable for the tests.
var racyWindow = 2 * time.Second

// read returns the record of the entry file rel of st, from the cache when
// the file is unchanged. A nil cache reads the file.
func (c *RecordCache) read(st *mem.Store, rel string) (mem.Record, error) {
	if c == nil {
		e, err := st.Read(rel)
		if err != nil {
			return mem.Record{}, err
		}
		return e.Record(), nil
	}
	path := filepath.Join(st.Root, filepath.FromSlash(rel))
	key, keyOK := statKey(path)
	c.mu.Lock()
	hit, found := c.m[path]
	c.mu.Unlock()
	if keyOK && found && hit.key == key {
		return hit.rec, nil
	}
	e, err := st.Read(rel)
	if err != nil {
		return mem.Record{}, err
	}
	rec := e.Record()
	if keyOK && time.Since(key.ctime) > racyWindow {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxCachedRecords {
			c.m = make(map[string]cachedRecord)
		}
		c.m[path] = cachedRecord{key, rec}
		c.mu.Unlock()
	}
	return rec, nil
}
