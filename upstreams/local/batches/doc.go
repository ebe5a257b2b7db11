// Package batches runs the local upstream's batches in the background:
// a Runner leases open batches from the store (one worker at a time per
// batch, across instances), validates each input file line by line
// (validate.go), sends its requests through the gateway's Dispatcher,
// concurrency at a time, waiting out 429s and retrying 5xx (execute.go),
// starts them and stores their outcomes in groups as they arrive
// (groups.go) so that another runner resumes where a dead one stopped,
// and writes the output and error files.
//
// It depends on the store (package store: the batch rows, their states
// and leases) and on upstreams for the Dispatcher; the HTTP handlers that
// create, list and cancel batches are the local upstream's (package
// local), which wakes and cancels the Runner.
package batches
