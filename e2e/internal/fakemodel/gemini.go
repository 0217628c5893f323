package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Gemini API (generativelanguage): POST
// /v1beta/models/MODEL:generateContent and :streamGenerateContent
// (?alt=sse), as Gemini CLI calls it with GOOGLE_GEMINI_BASE_URL set;
// :countTokens is a side request.

type geminiPart struct {
	Text         string          `json:"text"`
	Thought      bool            `json:"thought"`
	FunctionCall json.RawMessage `json:"functionCall"`
	FunctionResp *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	Model    string          `json:"model"`
	Contents []geminiContent `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
	} `json:"tools"`
}

// geminiMethod is the method of a Gemini API path ("generateContent",
// "streamGenerateContent", "countTokens"), or "".
func geminiMethod(path string) string {
	i := strings.LastIndex(path, ":")
	if i < 0 || !strings.Contains(path[:i], "/models/") {
		return ""
	}
	return path[i+1:]
}

// geminiModel is the model named in a Gemini API path.
func geminiModel(path string) string {
	i := strings.LastIndex(path, "/models/")
	j := strings.LastIndex(path, ":")
	if i < 0 || j < i {
		return ""
	}
	return path[i+len("/models/") : j]
}

// Long: one walk over the contents (user text, function responses) and
// one over the declarations.
func parseGemini(body []byte, p *parsed) error {
	var r geminiRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	p.model, p.raw = r.Model, body
	trailing := 0 // contents after the model's last one are new
	for i, c := range r.Contents {
		if c.Role == "model" {
			trailing = i + 1
		}
	}
	for i, c := range r.Contents {
		if c.Role == "model" {
			continue
		}
		var text strings.Builder
		for _, part := range c.Parts {
			if fr := part.FunctionResp; fr != nil {
				p.resultCount++
				if i >= trailing {
					t := geminiResultText(fr.Response)
					p.newResults = append(p.newResults, Result{CallID: fr.ID, Name: fr.Name, Text: t, Bytes: len(t)})
				}
				continue
			}
			text.WriteString(part.Text)
		}
		if text.Len() > 0 {
			if len(p.userTexts) == 0 {
				p.firstUser = text.String()
			}
			p.userTexts = append(p.userTexts, text.String())
		}
	}
	for _, t := range r.Tools {
		for _, raw := range t.FunctionDeclarations {
			var d struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(raw, &d); err != nil {
				return fmt.Errorf("function declaration %d: %w", len(p.tools), err)
			}
			if d.Name == "" {
				return fmt.Errorf("function declaration %d: no name", len(p.tools))
			}
			p.topBytes = append(p.topBytes, compactLen(raw))
			p.tools = append(p.tools, ToolDef{Name: d.Name, Bytes: compactLen(raw), top: len(p.topBytes) - 1})
		}
	}
	return nil
}

// geminiResultText is what a function response shows the model: its
// "output" (or "error") string when it has one, else the JSON.
func geminiResultText(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		for _, k := range []string{"output", "error"} {
			var s string
			if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return string(trimSpace(raw))
}

func writeGemini(w http.ResponseWriter, p *parsed, rep Reply) {
	part := map[string]any{"text": rep.Text}
	if rep.Kind == "call" {
		var args any = map[string]any{}
		if len(rep.Args) > 0 {
			_ = json.Unmarshal(rep.Args, &args)
		}
		part = map[string]any{"functionCall": map[string]any{"id": rep.CallID, "name": rep.Tool, "args": args}}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 1 + len(p.raw)/4, "candidatesTokenCount": 8, "totalTokenCount": 9 + len(p.raw)/4},
		"modelVersion":  p.model,
	}
	if !p.stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).event("", resp)
}
