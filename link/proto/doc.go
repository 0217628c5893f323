// Package proto holds the herdr-link/1 pieces that link and the start of
// agents (link/start) share: the agent names (with the aliases a start
// gives) and the error codes and [Error] a model is shown. Package link
// re-exports them.
package proto
