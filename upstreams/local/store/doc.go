// Package store keeps the local upstream's objects: files (metadata and
// contents), threads, responses, batches (with their requests, outcomes
// and leases) and vector stores (with their files, ingestion leases and
// indexed chunks), every method scoped to an owner.
//
// There is one SQL layer (records, vsRecords: one set of statements,
// bound for either database by sqlDB.q) and two dialects: SQLite
// (embedded, file contents beside the database, FTS5 for full-text
// search) and PostgreSQL (everything in the database, tsvector for
// full-text search and pgvector for embeddings), each adding only what
// its engine does differently. Lists page through one helper (page.go);
// migrations are applied at open (migrations.go).
//
// The package also holds what the stored rows mean where the SQL needs
// it: a batch's states and their transitions (batch_states.go: UpdateBatch
// moves a batch only from the states it is in), the line of a batch's
// output file (written in SQL for requests failed all at once), the
// leases that give a batch or an ingestion to one worker at a time, the
// clock and IDs objects are stamped with, and the reference ranking of
// chunks by vector similarity in memory that a database's own ranking
// (NearestChunker) must agree with. It imports nothing of the local
// upstream's other packages.
package store
