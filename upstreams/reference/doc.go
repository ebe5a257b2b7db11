// Package reference is an offline, deterministic implementation of chat
// completions and embeddings: the upstream kind `reference`. It is not a language model
// and never claims to be one. It implements the request and response
// contract exactly, so gateways, test suites and client code can be
// exercised with no provider and no network, reproducibly.
//
// How a reply is made (engine version in [Version]):
//
//   - Text is a sequence of words drawn from a fixed vocabulary by a
//     generator seeded with a hash of the model, the messages, `seed`,
//     `temperature`, `top_p` and the choice index; the first words quote
//     the last user message. Same request, same reply; a different
//     temperature, top_p or seed gives different text; choices differ.
//   - The reply is a token sequence in the model's public encoding;
//     `max_completion_tokens` (or `max_tokens`) cuts it at exactly that
//     many tokens with finish_reason `length`. The first `stop` sequence
//     found ends the text before it, finish_reason `stop`.
//   - presence_penalty > 0 draws no word twice while unused words remain;
//     frequency_penalty < 0 repeats the previous word every other draw;
//     logit_bias of +50 or more puts that token's text at the start of
//     the reply, -50 or less removes the token wherever it would appear.
//   - Tools: `none` never calls; a named function is always called;
//     `required` calls the tools the last user message names, else the
//     first tool; `auto` calls the tools the last user message names (or
//     the first tool when it asks to "use a tool" / "call a tool"). With
//     parallel_tool_calls false only one tool is called. Arguments are
//     JSON generated from the tool's parameters schema and validate
//     against it. After `tool` messages the reply quotes their content.
//   - response_format json_object answers {"reply": text}; json_schema
//     answers JSON generated to validate against the given schema.
//   - logprobs: each token with a deterministic log probability and its
//     bytes; top_logprobs alternatives in descending order, the chosen
//     token first.
//   - Streaming renders the same tokens as chunks: the role first,
//     content and tool-call deltas (with index), one finish_reason per
//     choice, a usage chunk when stream_options.include_usage, [DONE].
//   - stream_interval (Engine.StreamInterval, default 0) pauses that
//     long before each event after the first, so a stream arrives over
//     time as a model's does.
//   - usage counts the prompt with the gateway's tokenizer (package
//     tokens) and the completion as the tokens generated for all choices.
//
// Embeddings ([Embed]) hash each input's lower-cased words and word pairs
// (64-bit FNV-1a) into signed buckets and scale the vector to unit length:
// the same text gives the same vector on every machine, texts sharing
// words are closer than texts sharing none, and a token array embeds as
// its text. Vectors have 1536 dimensions for text-embedding-3-small and
// ada-002, 3072 for text-embedding-3-large, 256 for any other model
// (`dimensions` chooses up to that, or up to 3072 for other models);
// `encoding_format` base64 packs the float32 values little-endian. The
// public limits hold: 2048 inputs, 8192 tokens per input, 300,000 tokens
// per request, each refused 400 with the field as param.
package reference
