// Package gatewaytest holds what the end-to-end tests of module/e2e share:
// clients of a gateway (SDK, RawRequest), fake providers and upstreams,
// gateway processes the tests start and kill (StartChild, Main), and the
// helpers of each API surface (batches, files, vector stores, keys) that
// tests of more than one concern use. Each file is named after the tests
// its helpers came from.
package gatewaytest
