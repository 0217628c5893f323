package herdrlink

import (
	"fmt"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/recording"
	"github.com/herdr-link/herdr-link/schema"
)

// recordedHerdr is the recording's comment naming the Herdr it was made
// against ("Herdr 0.9.1, protocol 22"), from its ping answer; "" when the
// recording has none. herdr-sim verify replays it against that release.
func recordedHerdr(ex []recording.Exchange) string {
	for _, e := range ex {
		if e.Method() != schema.MethodPing || len(e.Responses) == 0 {
			continue
		}
		var env struct {
			Result struct {
				Version  string `json:"version"`
				Protocol uint32 `json:"protocol"`
			} `json:"result"`
		}
		if jsonx.Unmarshal(e.Responses[0], &env) == nil && env.Result.Version != "" {
			return fmt.Sprintf("Herdr %s, protocol %d", env.Result.Version, env.Result.Protocol)
		}
	}
	return ""
}
