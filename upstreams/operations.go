package upstreams

// Operation IDs. They name operations in routes, key permissions, metrics and
// records; the gateway's operation table maps method + path to one of them.
const (
	OpChatCompletionsCreate = "chat.completions.create"

	OpFilesCreate   = "files.create"
	OpFilesList     = "files.list"
	OpFilesRetrieve = "files.retrieve"
	OpFilesDelete   = "files.delete"
	OpFilesContent  = "files.content"

	OpBatchesCreate   = "batches.create"
	OpBatchesRetrieve = "batches.retrieve"
	OpBatchesList     = "batches.list"
	OpBatchesCancel   = "batches.cancel"

	OpThreadsCreate   = "threads.create"
	OpThreadsRetrieve = "threads.retrieve"
	OpThreadsUpdate   = "threads.update"
	OpThreadsDelete   = "threads.delete"

	OpVectorStoresCreate   = "vector_stores.create"
	OpVectorStoresList     = "vector_stores.list"
	OpVectorStoresRetrieve = "vector_stores.retrieve"
	OpVectorStoresUpdate   = "vector_stores.update"
	OpVectorStoresDelete   = "vector_stores.delete"
	OpVectorStoresSearch   = "vector_stores.search"

	OpVectorStoreFilesCreate   = "vector_stores.files.create"
	OpVectorStoreFilesList     = "vector_stores.files.list"
	OpVectorStoreFilesRetrieve = "vector_stores.files.retrieve"
	OpVectorStoreFilesDelete   = "vector_stores.files.delete"
	OpVectorStoreFilesContent  = "vector_stores.files.content"

	OpModelsList     = "models.list"
	OpModelsRetrieve = "models.retrieve"

	// The Responses interface: served by a provider, or by the local
	// upstream on its store with the chat route generating.
	OpResponsesCreate     = "responses.create"
	OpResponsesRetrieve   = "responses.retrieve"
	OpResponsesDelete     = "responses.delete"
	OpResponsesInputItems = "responses.input_items.list"

	// The Conversations interface: served by a provider, or by the local
	// upstream on its store, where responses read and append to them.
	OpConversationsCreate       = "conversations.create"
	OpConversationsRetrieve     = "conversations.retrieve"
	OpConversationsUpdate       = "conversations.update"
	OpConversationsDelete       = "conversations.delete"
	OpConversationItemsCreate   = "conversations.items.create"
	OpConversationItemsList     = "conversations.items.list"
	OpConversationItemsRetrieve = "conversations.items.retrieve"
	OpConversationItemsDelete   = "conversations.items.delete"

	// Provider operations outside the spec, passed through so a team's
	// other calls keep working behind the gateway; batches run them too.
	OpEmbeddingsCreate    = "embeddings.create"
	OpCompletionsCreate   = "completions.create"
	OpModerationsCreate   = "moderations.create"
	OpImagesGenerate      = "images.generate"
	OpImagesEdit          = "images.edit"
	OpAudioSpeech         = "audio.speech"
	OpAudioTranscriptions = "audio.transcriptions"
	OpAudioTranslations   = "audio.translations"

	// OpUnknown names every /v1 path the table does not know; it is
	// answered 404 unless a route sends it to an upstream.
	OpUnknown = "unknown"
)
