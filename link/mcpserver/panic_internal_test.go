package mcpserver

import (
	"bufio"
	"io"
	"testing"
	"testing/synctest"
)

// A panic in the handler becomes -32603 for that request, and serving goes
// on.
func TestHandlerPanicBecomesInternalError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opt := Options{beforeHandle: func(method string) {
			if method == "explode" {
				panic("boom")
			}
		}}
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() { _ = Serve(t.Context(), inR, outW, opt); outW.Close(); close(done) }()
		sc := bufio.NewScanner(outR)
		next := func() string {
			t.Helper()
			if !sc.Scan() {
				t.Fatal("no answer")
			}
			return sc.Text()
		}
		_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"explode"}` + "\n"))
		if l := next(); l != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}` {
			t.Fatalf("panic answer %s", l)
		}
		_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"))
		if l := next(); l != `{"jsonrpc":"2.0","id":2,"result":{}}` {
			t.Fatalf("after the panic: %s", l)
		}
		inW.Close()
		<-done
	})
}
