package mcpserver

import (
	"bytes"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// eachMember calls f with the key and value of each member of the JSON
// object t, in order, without decoding the values. Keys are decoded
// (escapes resolved as a decode into a map resolves them), and a key
// that appears twice is given twice: the caller keeps the last, as a map
// would. It reports false when t is not an object. t is valid JSON (the
// whole line was checked by classify); on anything else it reports
// false, never a member that a decode would not have given.
func eachMember(t []byte, f func(key, val []byte)) bool {
	i := skipSpace(t, 0)
	if i >= len(t) || t[i] != '{' {
		return false
	}
	i = skipSpace(t, i+1)
	if i < len(t) && t[i] == '}' {
		return skipSpace(t, i+1) == len(t)
	}
	for {
		if i >= len(t) || t[i] != '"' {
			return false
		}
		end, plain := skipString(t, i)
		if end < 0 {
			return false
		}
		key := t[i+1 : end-1]
		if !plain {
			var s string
			if jsonx.Unmarshal(t[i:end], &s) != nil {
				return false
			}
			key = []byte(s)
		}
		i = skipSpace(t, end)
		if i >= len(t) || t[i] != ':' {
			return false
		}
		i = skipSpace(t, i+1)
		vend := skipValue(t, i)
		if vend < 0 {
			return false
		}
		f(key, t[i:vend])
		i = skipSpace(t, vend)
		if i >= len(t) {
			return false
		}
		switch t[i] {
		case '}':
			return skipSpace(t, i+1) == len(t)
		case ',':
			i = skipSpace(t, i+1)
		default:
			return false
		}
	}
}

func skipSpace(t []byte, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string starting at t[i] (after its
// closing quote; -1 when it has none) and whether it is plain: printable
// ASCII without escapes, so that its text is its bytes.
func skipString(t []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(t); j++ {
		switch c := t[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			j++
		case c < 0x20 || c >= 0x7f:
			plain = false
		}
	}
	return -1, false
}

// skipValue returns the end of the value starting at t[i] (-1 when there
// is none).
func skipValue(t []byte, i int) int {
	if i >= len(t) {
		return -1
	}
	switch t[i] {
	case '"':
		end, _ := skipString(t, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(t); j++ {
			switch t[j] {
			case '"':
				end, _ := skipString(t, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	// A number or a literal.
	j := i
	for j < len(t) && !endsValue(t[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// jsonString decodes a JSON string value; ok is false for anything else
// (null included).
func jsonString(v []byte) (s string, ok bool) {
	t := bytes.TrimSpace(v)
	if len(t) < 2 || t[0] != '"' {
		return "", false
	}
	if end, plain := skipString(t, 0); plain && end == len(t) {
		return string(t[1 : len(t)-1]), true
	}
	if jsonx.Unmarshal(t, &s) != nil {
		return "", false
	}
	return s, true
}

func endsValue(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
