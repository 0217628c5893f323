// Package reqcheck checks a request line as Herdr's serde decoding does:
// the envelope (id, method, params; duplicates, trailing characters,
// syntax), then the params of the method — required fields at any depth,
// value types, integer ranges, enum values, union tags — and words every
// rejection as serde_json does, with its line and column. [Parse] takes a
// common well-formed line on a fast path and anything else token by token.
//
// It knows nothing of the world: a request it accepts is only well-formed.
package reqcheck
