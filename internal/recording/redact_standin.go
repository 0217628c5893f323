package recording

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	wsForm   = regexp.MustCompile(`^w[0-9A-Z]{1,12}$`)
	tabForm  = regexp.MustCompile(`^(w[0-9A-Z]{1,12}):t([0-9A-Z]{1,12})$`)
	paneForm = regexp.MustCompile(`^(w[0-9A-Z]{1,12}):p([0-9A-Z]{1,12})$`)
)

// alphabet is Herdr's id digit set (bijective base 32).
const alphabet = "123456789ABCDEFGHJKMNPQRSTVWXYZ0"

func encode(n int) string {
	var b []byte
	for n > 0 {
		n--
		b = append([]byte{alphabet[n%32]}, b...)
		n /= 32
	}
	return string(b)
}

// redactor assigns stand-ins on first sight.
type redactor struct {
	m          map[string]string
	ws         int
	tabs, pans map[string]int // per stand-in workspace
	counts     map[string]int // per class
}

func (r *redactor) stand(class, v string) string {
	if s, ok := r.m[v]; ok {
		return s
	}
	var s string
	switch class {
	case "id":
		s = r.id(v)
	default:
		r.counts[class]++
		n := strconv.Itoa(r.counts[class])
		switch class {
		case "path":
			s = "/redacted/dir-" + n
		case "title":
			s = "title " + n
		case "name":
			s = "agent-" + n
		case "label":
			s = "label-" + n
		default:
			s = class + "-" + n
		}
	}
	r.m[v] = s
	return s
}

// id keeps an id's form, so the simulator parses the stand-in as Herdr
// would have parsed the original.
func (r *redactor) id(v string) string {
	switch {
	case wsForm.MatchString(v):
		r.ws++
		return "w" + encode(r.ws)
	case tabForm.MatchString(v):
		ws := r.stand("id", tabForm.FindStringSubmatch(v)[1])
		r.tabs[ws]++
		return ws + ":t" + encode(r.tabs[ws])
	case paneForm.MatchString(v):
		ws := r.stand("id", paneForm.FindStringSubmatch(v)[1])
		r.pans[ws]++
		return ws + ":p" + encode(r.pans[ws])
	case strings.HasPrefix(v, "term_"):
		r.counts["term"]++
		return fmt.Sprintf("term_%015x", r.counts["term"])
	case v == "":
		return ""
	}
	r.counts["id"]++
	return "id-" + strconv.Itoa(r.counts["id"])
}
