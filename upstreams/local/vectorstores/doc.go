// Package vectorstores indexes and searches the files attached to the
// local upstream's vector stores: an Ingester leases attachments in
// progress from the store and extracts their text (extract.go: text,
// HTML, PDF, docx, pptx), cuts it into token windows (chunk.go), embeds
// the chunks through the gateway's embeddings route on the attaching
// key's behalf (embed.go) and stores them; Vectors.Search ranks a store's
// chunks by BM25 and, with an embedding model, by cosine similarity,
// fused by reciprocal rank (search.go), over indexes of the chunk texts
// and embeddings kept in memory within a budget (cache.go, textindex.go,
// index.go), past it by the database's own ranking, among the files its
// attribute filter passes (filter.go).
//
// It depends on the store (package store) and on upstreams for the
// Dispatcher; the HTTP handlers of vector stores and their files are the
// local upstream's (package local).
package vectorstores
