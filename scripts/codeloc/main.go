// Command codeloc drives the code-localization benchmark
// (../shared/bench/codeloc) with code/rank until mira-code exists:
//
//	codeloc index ROOT MODEL      parse ROOT's source files, save the model
//	codeloc query ROOT [MODEL]    rank ROOT's files for the task on stdin
//	codeloc batch                 JSON lines {"root", "query"} on stdin, a
//	                              JSON array of ranked paths out per line
//
// query loads MODEL when given and builds the model from ROOT otherwise;
// it prints one path a line, best first. MIRA_RANK_PARAMS changes the
// ranking's weights for ablations, as comma-separated name=value pairs:
// graph, symbol, near, seeds, maxdefiners, k1, and w.FIELD or b.FIELD for
// the file fields path, name, doc and body.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/code/parse"
	"github.com/miramem/mira/code/rank"
)

// sourceExts are the extensions indexed: the benchmark's source files and
// whatever code/parse knows.
var sourceExts = map[string]bool{".go": true, ".py": true, ".js": true, ".ts": true, ".tsx": true,
	".rs": true, ".java": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".rb": true,
	".jsx": true, ".mjs": true, ".cjs": true, ".pyi": true, ".mts": true, ".cts": true}

const maxBytes = 1 << 20

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "codeloc:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	k := 100
	if len(args) >= 2 && args[0] == "index" && len(args) == 3 {
		m, err := build(args[1])
		if err != nil {
			return err
		}
		b, err := m.MarshalBinary()
		if err != nil {
			return err
		}
		return os.WriteFile(args[2], b, 0o644)
	}
	if len(args) == 1 && args[0] == "batch" {
		return batch(stdin, stdout)
	}
	if len(args) < 2 || args[0] != "query" || len(args) > 3 {
		return fmt.Errorf("usage: codeloc index ROOT MODEL | codeloc query ROOT [MODEL] < task")
	}
	q, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	var m *rank.Model
	if len(args) == 3 {
		b, err := os.ReadFile(args[2])
		if err != nil {
			return err
		}
		m = rank.New()
		t := time.Now()
		if err := m.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("%s: %w", args[2], err)
		}
		if os.Getenv("CODELOC_TIMES") != "" {
			fmt.Fprintf(os.Stderr, "load %v\n", time.Since(t))
		}
	} else if m, err = build(args[1]); err != nil {
		return err
	}
	if err := setParams(m, os.Getenv("MIRA_RANK_PARAMS")); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, h := range m.Files(rank.Query{Text: string(q), K: k, Explain: os.Getenv("CODELOC_WHY") != ""}) {
		fmt.Fprintln(w, h.Path)
		if len(h.Why) > 0 {
			fmt.Fprintf(os.Stderr, "%s %.3f %s\n", h.Path, h.Score, strings.Join(h.Why, "; "))
		}
	}
	return w.Flush()
}

// batch answers many queries, keeping the model of each root: a fast loop
// for trying weights on a corpus (run.py starts a process per query).
func batch(stdin io.Reader, stdout io.Writer) error {
	models := map[string]*rank.Model{}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	enc := json.NewEncoder(stdout)
	for sc.Scan() {
		var c struct{ Root, Query string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return err
		}
		m := models[c.Root]
		if m == nil {
			var err error
			if m, err = build(c.Root); err != nil {
				return err
			}
			if err := setParams(m, os.Getenv("MIRA_RANK_PARAMS")); err != nil {
				return err
			}
			models[c.Root] = m
		}
		var out []string
		for _, h := range m.Files(rank.Query{Text: c.Query, K: 100}) {
			out = append(out, h.Path)
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	return sc.Err()
}

func build(root string) (*rank.Model, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && sourceExts[strings.ToLower(filepath.Ext(p))] {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	m := rank.New()
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if len(src) > maxBytes {
			src = src[:maxBytes]
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		d := rank.Doc{Path: rel, Lang: parse.Language(rel), Text: src}
		if d.Lang != "" {
			if f, err := parse.Parse(rel, src); err == nil {
				d.File = f
			}
		}
		m.Put(d)
	}
	return m, nil
}

func setParams(m *rank.Model, spec string) error {
	if spec == "" {
		return nil
	}
	p := m.Params()
	fields := map[string]int{"path": 0, "name": 1, "doc": 2, "body": 3}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return fmt.Errorf("MIRA_RANK_PARAMS: %q is not name=number", kv)
		}
		switch {
		case k == "graph":
			p.Graph = x
		case k == "graphother":
			p.GraphOther = x
		case k == "graphusers":
			p.GraphUsers = x != 0
		case k == "symbol":
			p.SymbolBoost = x
		case k == "near":
			p.Near = x
		case k == "seeds":
			p.Seeds = int(x)
		case k == "maxdefiners":
			p.MaxDefiners = int(x)
		case k == "k1":
			p.K1 = x
		case strings.HasPrefix(k, "w.") || strings.HasPrefix(k, "b.") || strings.HasPrefix(k, "sw."):
			pre, f, _ := strings.Cut(k, ".")
			i, ok := fields[f]
			if !ok {
				return fmt.Errorf("MIRA_RANK_PARAMS: no field %q", f)
			}
			switch pre {
			case "w":
				p.Weight[i] = x
			case "b":
				p.B[i] = x
			case "sw":
				p.SymWeight[i] = x
			}
		default:
			return fmt.Errorf("MIRA_RANK_PARAMS: no parameter %q", k)
		}
	}
	m.SetParams(p)
	return nil
}
