package socket

import (
	"errors"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"testing"
)

func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"id":"a","result":{"type":"pong","version":"0.8.2","protocol":20,"capabilities":null}}`))
	f.Add([]byte(`{"id":"","error":{"code":"invalid_request","message":"x"}}`))
	f.Add([]byte(`{"id":"a:sub:0:probe","error":{"code":"pane_not_found","message":"x"}}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"id":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var raw jsonx.RawMessage
		err := decodeResponse("m", "a", line, true, &raw)
		if err == nil {
			if len(raw) == 0 || raw[0] != '{' {
				t.Fatalf("accepted %q with result %q", line, raw)
			}
			return
		}
		var se *Error
		if !errors.As(err, &se) && !errors.Is(err, ErrMalformedResponse) && !errors.Is(err, ErrProtocol) {
			t.Fatalf("unclassified error %v for %q", err, line)
		}
	})
}
