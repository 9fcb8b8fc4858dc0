// Package embed turns texts into vectors for the vector half of hybrid
// recall (BM25 candidates and vector candidates, fused). It holds Mira's
// built-in offline embedder (pure Go, deterministic, with no downloaded
// weights), a client for any OpenAI-compatible /v1/embeddings endpoint
// (NewOpenAI), and a client for /v1/rerank endpoints (NewReranker).
//
// # Two embedders
//
// Hashing (NewHashing) has no fitted state. A text is lower-cased, split into
// words, stemmed (Porter) and mapped to hashed features: word stems, bigrams
// of adjacent content words and character 3–5-grams of content words with
// boundary marks ("<pa", "pain", ...). Each family is weighted by sublinear
// TF (1+ln tf), normalised on its own and scaled by its share (words 1,
// bigrams 0.3, n-grams 0.5); stop words count a tenth. The features are
// signed-hashed into a fixed number of dimensions and the vector is
// L2-normalised. It is the fallback before a store has a model, and the
// reference in tests.
//
// Model (Fit) is the full embedder, fitted on the store's own texts at index
// rebuild. It has two blocks, concatenated:
//
//   - the same hashed lexical features, now weighted by IDF from a
//     count-min table of document frequencies over hashed features (so
//     n-grams and bigrams have an IDF without a vocabulary);
//   - a learned block: LSA term vectors from a truncated SVD of a
//     contexts × words TF-IDF matrix, where each text's row also holds half
//     the weight of the words of the two texts before and after it in the
//     store's order. A text's learned vector is the IDF-weighted sum of its
//     words' vectors (the LSA fold-in).
//
// Each block is unit length before weighting, so the cosine of two vectors
// is 0.15·lexical + 0.85·learned. Texts that form a stream (a conversation's
// turns) are best embedded with EmbedSequence, which adds half of each
// neighbour's learned sum to a text's own, as in fitting; queries use Embed.
//
// The model is frozen until the next rebuild and persisted in a compact
// binary file (see WriteTo); its ID names the model's checksum, so vectors
// from two models are never mixed.
//
// # Why this design (LoCoMo dev, 6 conversations, 1,155 questions)
//
// Each conversation is its own store; the model is fitted on that
// conversation's turns only. Recall@5 / recall@10 of the vector alone:
//
//	hashing, 384 dims                          0.308 / 0.383
//	hashing, 4096 dims                         0.373 / 0.456  (collisions cost a lot at 384)
//	IDF-weighted lexical only, 384 dims        0.411 / 0.506
//	LSA 128, rows = single texts               0.481 / 0.601
//	LSA 128, rows = ±2-text windows            0.623 / 0.716
//	default model (adaptive rank), Embed       0.618 / 0.722
//	default model, EmbedSequence               0.643 / 0.740
//
// against BM25 over the same tokens at 0.555 / 0.634 (SQLite FTS5: 0.525 /
// 0.607; the LoCoMo paper's DRAGON: 0.567 / 0.662). Fused with BM25 by a
// weighted sum of min–max normalised scores (BM25 share 0.4, top 30 from
// each side) the default model with EmbedSequence reaches 0.644 / 0.753;
// reciprocal-rank fusion (k=60) is clearly worse at 0.600 / 0.692, because
// the vector ranking is the better one and RRF gives both the same weight.
// With one model fitted over all six conversations (3,435 texts, as one
// store with six scopes) the vector gets 0.597 / 0.710 and the fusion
// 0.627 / 0.732. The full tables, per category and per half, come from
// TestLoCoMo and TestLoCoMoSweep in eval_test.go.
//
// # Model file
//
// All integers little-endian:
//
//	magic     8 bytes  "MIRAEMB\x00"
//	version   u32      1
//	params    u32 LexDim, SemDim, MinGram, MaxGram, Window;
//	          f64 WordWeight, BigramWeight, CharWeight, StopWeight, SemWeight,
//	              WindowWeight
//	docs      u64      number of texts fitted on
//	dfBits    u32      the document-frequency table has 2^dfBits cells
//	dfTab     2^dfBits bytes: round(16·ln df)+1, 0 = unseen
//	nterms    u32
//	terms     nterms × u64, ascending feature keys of word stems
//	scale     nterms × f32
//	qvec      nterms × SemDim × i8 (row t times scale[t] is term t's vector)
//	sigma     SemDim × f32 singular values
//	checksum  32 bytes: SHA-256 of everything before it
//
// A feature key is the FNV-1a hash of the feature's text, started from a
// seed per family and finished by the SplitMix64 mixer, with its low three
// bits replaced by the family and a stop-word flag (features.go). A
// feature's two table cells are bits 3.. and 34.. of its key, masked to
// dfBits; its lexical dimension is key>>3 modulo LexDim and its sign the
// top bit. The model's ID is "mira-lsa-v1/<dim>/" and the first 12 hex
// digits of the checksum, so equal files have equal IDs and a damaged file
// is refused rather than trusted. The generated 100,000-text benchmark
// corpus gives a file of 7.5 MB (20,000 words × 256 learned dimensions and
// a 2 MiB table); at the 50,000-word cap it would be 15 MB.
//
// Random indexing over the same windows, a larger learned block, IDF powers
// other than 1, singular-value scaling and other window profiles were
// measured and did not help (numbers next to the code that chose).
package embed
