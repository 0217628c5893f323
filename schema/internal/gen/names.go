package gen

import (
	"bytes"
	"fmt"
	"strings"
)

var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "api": "API", "json": "JSON", "pid": "PID",
	"tty": "TTY", "ms": "MS", "ui": "UI", "ansi": "ANSI", "ttl": "TTL", "uri": "URI",
	"cwd": "CWD", "os": "OS", "px": "PX", "rgb": "RGB", "rgba": "RGBA", "bgra": "BGRA", "png": "PNG",
}

// Pascal converts snake, kebab and dotted names to Go's exported form.
func Pascal(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == ' ' || r == ':' || r == '/'
	}) {
		if up, ok := initialisms[strings.ToLower(part)]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	out := b.String()
	if out == "" || (out[0] >= '0' && out[0] <= '9') {
		out = "V" + out
	}
	return out
}

func comment(w *bytes.Buffer, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(w, "%s// %s\n", indent, strings.TrimRight(line, " "))
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func variantName(union, tag string) string {
	if union == "ResponseResult" {
		return "Result" + Pascal(tag)
	}
	return union + Pascal(tag)
}
