module github.com/herdr-link/herdr-link

go 1.26

require (
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/sourcegraph/jsonrpc2 v0.2.3 // indirect
	golang.org/x/text v0.14.0 // indirect
)
