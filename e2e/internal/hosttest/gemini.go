package hosttest

// Gemini CLI: ~/.gemini/settings.json holds what `herdr-link config
// gemini` prints plus an API-key sign-in; the model is the Gemini API at
// the fake (GOOGLE_GEMINI_BASE_URL, fakemodel's gemini.go); headless
// `gemini -p … --yolo`.
func init() {
	Register(&Host{
		Name:     "gemini",
		Display:  "Gemini CLI",
		Version:  "0.61.0",
		Packages: []string{"@google/gemini-cli@0.61.0"},
		Bin:      "gemini",
		Kind:     "gemini",
		Modes: []Mode{
			{Name: "default", ListChanged: true, Outside: true, Note: "API key at GOOGLE_GEMINI_BASE_URL; refreshes on list_changed two model steps late"},
		},
		Env: func(s *Session) []string {
			return []string{"GEMINI_API_KEY=hosttest-fake-key", "GOOGLE_GEMINI_BASE_URL=" + s.ModelURL,
				"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_CLI_TRUST_WORKSPACE=true"}
		},
		Command: geminiLike("gemini", ".gemini", func(Mode) map[string]any {
			return map[string]any{
				"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
				"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
				"privacy":  map[string]any{"usageStatisticsEnabled": false},
			}
		}, []string{"--model", "gemini-2.5-flash"}),
	})
}
