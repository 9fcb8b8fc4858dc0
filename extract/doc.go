// Package extract turns conversation turns into memories with a chat model:
// it asks for a few atomic, standalone facts per user message, then has the
// model reconcile each new fact with the nearest existing memories as ADD,
// UPDATE, DELETE or NONE.
//
// The package decides and never writes: Extractor.Facts and
// Extractor.Reconcile return facts and Actions, and the caller applies them
// to the store. Actions are shaped so that applying them destroys nothing:
//
//   - add stores a new memory under an id chosen here (Extractor.NewID), so
//     that later decisions of the same run can refer to it;
//   - update tombstones an existing memory as replaced by the memory an
//     earlier add of the same run stores;
//   - delete tombstones an existing memory with a reason;
//   - none stores nothing: a memory already says the same.
//
// Three rules keep what the user said from being lost to a model's mistake.
// A fact whose decisions only delete is stored all the same: that a memory
// is no longer true is itself worth remembering. A reconciliation call that
// fails (after the model client's retries and its one repair attempt) adds
// the batch's facts as they are. And a fact that a memory of the same run
// or of the store already says word for word is settled as none without
// asking the model.
//
// Small models garble 26-character ids, so prompts name memories m1, m2, …
// and facts f1, f2, …, and the replies are mapped back. Every reply is
// checked (unknown ids and actions, empty facts, unknown kinds, facts left
// without a decision) and a bad one is sent back for repair through the
// check function of Model.CompleteJSON.
package extract
