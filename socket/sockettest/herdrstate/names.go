package herdrstate

import "regexp"

// agentNameRE is Herdr's agent-name grammar, written here from Herdr's own
// invalid_agent_name message ("must start with a lowercase letter and
// contain only lowercase letters, digits, '-' or '_' (1-32 characters)").
// It is deliberately a second, independent implementation: the simulator
// is the oracle the client's socket.ValidAgentName is tested against, so
// it must not share that code (TestNameGrammarAgrees).
var agentNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

func validAgentName(s string) bool { return agentNameRE.MatchString(s) }
