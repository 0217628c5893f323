// Package pi carries the Pi extension (herdr-link.ts) so that
// 'herdr-link config pi' can print it with the binary's path filled in.
package pi

import _ "embed"

// Extension is the source of herdr-link.ts.
//
//go:embed herdr-link.ts
var Extension string

// BinLine is the line of Extension that names the herdr-link binary;
// 'herdr-link config pi' replaces it.
const BinLine = `const HERDR_LINK_BIN = "herdr-link";`
