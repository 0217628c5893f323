// Package deliver makes one delivery to one target Herdr agent: the
// delivery lock or try-lock, the blocker checks, the lease, the prompt,
// the occupant checks, the confirmation watch, the release, and the count
// of locks and writes left in the background. It sits below link, which
// keeps the protocol (envelope, names, errors, resolution, bootstrap):
// what a delivery needs of that comes through [Ports].
package deliver
