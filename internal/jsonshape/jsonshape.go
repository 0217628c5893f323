// Package jsonshape compares JSON documents by structure, not value: the
// keys of every object, their order, the type of every value and which
// optional keys are present. It is how the simulator is held to recordings
// of a live Herdr: ids, names, counters and texts differ between the two,
// their shape must not.
//
// A few values are structure too and are compared: the "type" tags of
// results and events, the "event" kinds and the "code" of errors.
package jsonshape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Kind is a JSON value's type.
type Kind int

// The kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Node is a parsed JSON value that keeps its objects' key order.
type Node struct {
	Kind  Kind
	Keys  []string // Object: keys in document order
	Vals  []*Node  // Object: values, parallel to Keys
	Items []*Node  // Array
	Text  string   // String: the value; Number, Bool: the literal
}

// Get returns the value of key in an object, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i]
		}
	}
	return nil
}

// nth returns the value of the nth (0-based) occurrence of key, or nil.
func (n *Node) nth(key string, nth int) *Node {
	for i, k := range n.Keys {
		if k == key {
			if nth == 0 {
				return n.Vals[i]
			}
			nth--
		}
	}
	return nil
}

// Str is the string value of key in an object, or "".
func (n *Node) Str(key string) string {
	if v := n.Get(key); v != nil && v.Kind == String {
		return v.Text
	}
	return ""
}

// maxDepth bounds nesting, so hostile input cannot exhaust the stack.
const maxDepth = 200

// Parse reads exactly one JSON value.
func Parse(b []byte) (*Node, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	n, err := parse(d, 0)
	if err != nil {
		return nil, fmt.Errorf("jsonshape: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("jsonshape: data after the JSON value")
	}
	return n, nil
}

func parse(d *json.Decoder, depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, errors.New("nesting too deep")
	}
	tok, err := d.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &Node{Kind: Null}, nil
	case bool:
		return &Node{Kind: Bool, Text: strconv.FormatBool(t)}, nil
	case json.Number:
		return &Node{Kind: Number, Text: t.String()}, nil
	case string:
		return &Node{Kind: String, Text: t}, nil
	case json.Delim:
		switch t {
		case '{':
			n := &Node{Kind: Object}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := parse(d, depth+1)
				if err != nil {
					return nil, err
				}
				n.Keys, n.Vals = append(n.Keys, key), append(n.Vals, v)
			}
			_, err := d.Token()
			return n, err
		case '[':
			n := &Node{Kind: Array}
			for d.More() {
				v, err := parse(d, depth+1)
				if err != nil {
					return nil, err
				}
				n.Items = append(n.Items, v)
			}
			_, err := d.Token()
			return n, err
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// Difference is one structural difference at a path (a JSON pointer).
type Difference struct {
	Path string
	What string // "missing key", "extra key", "key order", "type", "value", "length", "unsorted keys"
	Want string
	Got  string
}

func (d Difference) String() string {
	switch d.What {
	case "missing key":
		return fmt.Sprintf("%s: missing key (the recording has it)", d.Path)
	case "extra key":
		return fmt.Sprintf("%s: extra key (the recording does not have it)", d.Path)
	}
	return fmt.Sprintf("%s: %s: want %s, got %s", d.Path, d.What, d.Want, d.Got)
}

// valueKeys are keys whose string values are structure: result and event
// tags, event kinds, error codes.
var valueKeys = map[string]bool{"type": true, "event": true, "code": true}

// Compare reports how got differs from want in structure.
func Compare(want, got *Node) []Difference {
	var out []Difference
	compare(want, got, "", "", &out)
	return out
}

func compare(want, got *Node, path, key string, out *[]Difference) {
	if want.Kind != got.Kind {
		*out = append(*out, Difference{Path: pathOr(path), What: "type", Want: want.Kind.String(), Got: got.Kind.String()})
		return
	}
	switch want.Kind {
	case String:
		if valueKeys[key] && want.Text != got.Text {
			*out = append(*out, Difference{Path: pathOr(path), What: "value", Want: strconv.Quote(want.Text), Got: strconv.Quote(got.Text)})
		}
	case Array:
		if len(want.Items) != len(got.Items) {
			*out = append(*out, Difference{Path: pathOr(path), What: "length", Want: strconv.Itoa(len(want.Items)), Got: strconv.Itoa(len(got.Items))})
		}
		for i := 0; i < len(want.Items) && i < len(got.Items); i++ {
			compare(want.Items[i], got.Items[i], path+"/"+strconv.Itoa(i), "", out)
		}
	case Object:
		// A key that occurs twice (invalid for Herdr, possible in input)
		// is matched occurrence by occurrence.
		var common []string
		seen := map[string]int{}
		for i, k := range want.Keys {
			g := got.nth(k, seen[k])
			seen[k]++
			if g == nil {
				*out = append(*out, Difference{Path: path + "/" + escape(k), What: "missing key"})
				continue
			}
			common = append(common, k)
			compare(want.Vals[i], g, path+"/"+escape(k), k, out)
		}
		var gotCommon []string
		seen = map[string]int{}
		for _, k := range got.Keys {
			w := want.nth(k, seen[k])
			seen[k]++
			if w == nil {
				*out = append(*out, Difference{Path: path + "/" + escape(k), What: "extra key"})
				continue
			}
			gotCommon = append(gotCommon, k)
		}
		if strings.Join(common, ",") != strings.Join(gotCommon, ",") {
			*out = append(*out, Difference{Path: pathOr(path), What: "key order", Want: strings.Join(common, ","), Got: strings.Join(gotCommon, ",")})
		}
	}
}

// Sorted reports every object of n whose keys are not in alphabetical
// order (Herdr's event lines are sorted at every level).
func Sorted(n *Node) []Difference {
	var out []Difference
	sorted(n, "", &out)
	return out
}

func sorted(n *Node, path string, out *[]Difference) {
	switch n.Kind {
	case Object:
		if !sort.StringsAreSorted(n.Keys) {
			s := append([]string(nil), n.Keys...)
			sort.Strings(s)
			*out = append(*out, Difference{Path: pathOr(path), What: "unsorted keys", Want: strings.Join(s, ","), Got: strings.Join(n.Keys, ",")})
		}
		for i, k := range n.Keys {
			sorted(n.Vals[i], path+"/"+escape(k), out)
		}
	case Array:
		for i, v := range n.Items {
			sorted(v, path+"/"+strconv.Itoa(i), out)
		}
	}
}

func pathOr(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// Lines compares two JSON lines (see [Compare]).
func Lines(want, got []byte) ([]Difference, error) {
	w, err := Parse(want)
	if err != nil {
		return nil, fmt.Errorf("want: %w", err)
	}
	g, err := Parse(got)
	if err != nil {
		return nil, fmt.Errorf("got: %w", err)
	}
	return Compare(w, g), nil
}

// Marshal writes n as compact JSON, keys in the node's order.
func (n *Node) Marshal() []byte {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes()
}

func (n *Node) write(b *bytes.Buffer) {
	switch n.Kind {
	case Null:
		b.WriteString("null")
	case Bool, Number:
		b.WriteString(n.Text)
	case String:
		writeString(b, n.Text)
	case Array:
		b.WriteByte('[')
		for i, v := range n.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, k := range n.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			n.Vals[i].write(b)
		}
		b.WriteByte('}')
	}
}

func writeString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
}
