package start

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link/proto"
)

// ConfigPath is where a configured agent is looked up, relative to the
// caller's working directory and each of its parents.
const ConfigPath = ".agents/agent_config.json"

// maxConfigBytes bounds an agent_config.json.
const maxConfigBytes = 1 << 20

// ConfiguredAgent is one entry of agent_config.json's "agents" object.
//
// Format (every key optional but the kind):
//
//	{"agents": {"reviewer": {"kind": "claude", "args": ["--model", "opus"], "placement": "right"}}}
//
// The reference's form is accepted too: "placement" as {"mode":
// "new_tab", "label"?} (a tab) or {"mode": "with"} (a split to the right),
// and "variants": [{"kind", "args"?}, …] with "strategy": "round-robin"
// when there are several (each start of a Launcher takes the next).
type ConfiguredAgent struct {
	Kind      string
	Args      []string
	Placement string
}

type configEntry struct {
	Kind      string           `json:"kind"`
	Args      []string         `json:"args"`
	Placement jsonx.RawMessage `json:"placement"`
	Strategy  string           `json:"strategy"`
	Variants  []struct {
		Kind string   `json:"kind"`
		Args []string `json:"args"`
	} `json:"variants"`
}

// findConfig looks for ConfigPath in dir and its parents, up to and
// including stop (the user's home) or the filesystem root.
func findConfig(dir, stop string) (string, bool) {
	for {
		p := filepath.Join(dir, ConfigPath)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if dir == stop || parent == dir {
			return "", false
		}
		dir = parent
	}
}

// loadConfigured finds and reads the configured agent key.
// next picks the variant of a round-robin entry: it gets the entry's key
// (the file and the agent) and the number of variants.
func loadConfigured(dir, home, key string, next func(key string, n int) int) (ConfiguredAgent, error) {
	path, ok := findConfig(dir, home)
	if !ok {
		return ConfiguredAgent{}, newErr(proto.StartConfigNotFound, detailConfigMissing, nil)
	}
	f, err := os.Open(path)
	if err != nil {
		return ConfiguredAgent{}, newErr(proto.StartConfigInvalid, detailConfigUnreadable, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil || len(b) > maxConfigBytes {
		return ConfiguredAgent{}, newErr(proto.StartConfigInvalid, detailConfigUnreadable, err)
	}
	entries, err := parseConfig(b)
	if err != nil {
		return ConfiguredAgent{}, newErr(proto.StartConfigInvalid, detailConfigInvalid, err)
	}
	e, ok := entries[key]
	if !ok {
		return ConfiguredAgent{}, newErr(proto.StartAgentNotFound, detailConfigAgent, nil)
	}
	c, err := e.resolve(path+"\x00"+key, next)
	if err != nil {
		return ConfiguredAgent{}, newErr(proto.StartConfigInvalid, detailConfigInvalid, err)
	}
	return c, nil
}

// parseConfig decodes agent_config.json strictly: unknown keys are errors.
func parseConfig(b []byte) (map[string]configEntry, error) {
	var doc struct {
		Agents map[string]configEntry `json:"agents"`
	}
	if err := jsonx.UnmarshalStrict(b, &doc); err != nil {
		return nil, err
	}
	if doc.Agents == nil {
		return nil, errors.New(`no "agents" object`)
	}
	return doc.Agents, nil
}

func (e configEntry) resolve(rrKey string, next func(string, int) int) (ConfiguredAgent, error) {
	placement, err := configPlacement(e.Placement)
	if err != nil {
		return ConfiguredAgent{}, err
	}
	kind, args := e.Kind, e.Args
	switch {
	case len(e.Variants) > 0 && kind != "":
		return ConfiguredAgent{}, errors.New(`"kind" and "variants" together`)
	case len(e.Variants) > 1 && e.Strategy != "round-robin":
		return ConfiguredAgent{}, errors.New(`several variants need "strategy": "round-robin"`)
	case e.Strategy != "" && e.Strategy != "round-robin":
		return ConfiguredAgent{}, errors.New("unknown strategy")
	case len(e.Variants) > 0:
		i := next(rrKey, len(e.Variants))
		kind, args = e.Variants[i].Kind, e.Variants[i].Args
	}
	if !validKind(kind) {
		return ConfiguredAgent{}, errors.New("missing or malformed kind")
	}
	if err := checkArgs(args); err != nil {
		return ConfiguredAgent{}, err
	}
	return ConfiguredAgent{Kind: kind, Args: args, Placement: placement}, nil
}

func configPlacement(raw jsonx.RawMessage) (string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return "", nil
	}
	var s string
	if jsonx.Unmarshal(t, &s) == nil {
		if s != PlaceRight && s != PlaceDown && s != PlaceTab {
			return "", errors.New("unknown placement")
		}
		return s, nil
	}
	var obj struct {
		Mode  string `json:"mode"`
		Label string `json:"label"`
	}
	if err := jsonx.UnmarshalStrict(t, &obj); err != nil {
		return "", err
	}
	switch obj.Mode {
	case "new_tab":
		return PlaceTab, nil
	case "with":
		return PlaceRight, nil
	}
	return "", errors.New("unknown placement mode")
}
