package outbox

import "errors"

// ErrBusy: a flock of the store (the ledger's, a record's) stayed held
// by another process past the tries of its wait.
var ErrBusy = errors.New("outbox: a store file stayed locked by another process")
