package link

import (
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link/courier"
	"github.com/herdr-link/herdr-link/link/proto"
)

// Notice is what herdr-link types into a request's sender when the
// request ended without a reply (or a held answer was never typed)
// ([courier.Notice]).
type Notice = courier.Notice

// ExtractNotices returns every herdr-link/1 notice in text, in order.
func ExtractNotices(text string) []Notice {
	var out []Notice
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], `{"protocol":"herdr-link/1","notice":`)
		if j < 0 {
			break
		}
		s := i + j
		if end, ok := scanObject(text, s); ok {
			var n Notice
			if jsonx.Unmarshal([]byte(text[s:end]), &n) == nil && n.Protocol == proto.Protocol && n.Notice != "" && ValidMessageID(n.About) && ValidName(n.Peer) {
				out = append(out, n)
				i = end
				continue
			}
		}
		i = s + 1
	}
	return out
}
