// Package proto holds the herdr-link/1 pieces every layer of link shares:
// the error codes and the [Error] a model is shown. Package link
// re-exports them; the start of agents (link/start) and link itself build
// their errors here.
package proto
