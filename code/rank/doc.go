// Package rank ranks a project's files and symbols for a task, a question
// or a name: the ranking behind the code index's Files, Symbols and
// Touchpoints.
//
// In order of weight:
//
//  1. Words. BM25F over each file's fields: its path's words, the names of
//     the symbols it defines, their doc comments, and every identifier and
//     comment word of its text. Identifiers are split on camelCase,
//     snake_case and digits and also kept whole; words are lower-cased,
//     Porter-stemmed (the stemmer of the memory index) and stop words
//     dropped, in documents and queries alike. Symbols are ranked the same
//     way over their names, parents, signatures and doc comments, and a
//     file gains a share of its best symbol's score, so that one function
//     that holds several query words lifts its file.
//  2. Structure, where words are ambiguous: a one-hop spread along the
//     definition-reference graph from the best lexical hits, bounded to a
//     share of the top score. There is no global centrality prior: a file
//     gains only from the seeds the words found.
//  3. Near seeds: files the conversation points at (co-change partners of
//     the files it names, files memories link to), also bounded.
//
// The model keeps no text, only postings and symbols; Put replaces one
// file cheaply and MarshalBinary gives the form the index saves.
// scripts/codeloc measures the ranking on real commit histories.
package rank

import "github.com/miramem/mira/code/parse"

// Doc is one file as Put takes it.
type Doc struct {
	Path string      // slash-separated, relative to the project's root
	Lang string      // parse.Language(Path); "" for plain text
	Text []byte      // the file's source: its words are indexed, the text not kept
	File *parse.File // what parse extracted; nil for a file it does not know
}

// Put adds a file, or replaces the file of the same path. Hits name a
// symbol by its index in Doc.File.Symbols.
func (m *Model) Put(d Doc) { m.put(docInput(d)) }

func docInput(d Doc) input {
	in := input{path: d.Path, lang: d.Lang, text: d.Text}
	if d.File != nil {
		if in.lang == "" {
			in.lang = d.File.Lang
		}
		in.syms = make([]symIn, len(d.File.Symbols))
		for i, s := range d.File.Symbols {
			in.syms[i] = symIn{Kind: string(s.Kind), Name: s.Name, Parent: s.Parent,
				Signature: s.Signature, Doc: s.Doc, Line: s.Line}
		}
		in.refs = make([]refIn, len(d.File.Refs))
		for i, r := range d.File.Refs {
			in.refs[i] = refIn{Name: r.Name}
		}
	}
	return in
}
