package protocol

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The API names accepted in config and on the command line.
const (
	APIOpenAIChat        = "openai-chat"
	APIOpenAICompletions = "openai-completions"
	APIOpenAIResponses   = "openai-responses"
	APIAnthropicMessages = "anthropic-messages"
)

// DefaultAPI is the API used when none is configured.
const DefaultAPI = APIOpenAIChat

// registry maps each API name to its constructor. It is read-only after
// package initialisation (a fixed table, not mutable state).
var registry = map[string]func() Adapter{
	APIOpenAIChat:        func() Adapter { return OpenAIChat{} },
	APIOpenAICompletions: func() Adapter { return OpenAICompletions{} },
	APIOpenAIResponses:   func() Adapter { return OpenAIResponses{} },
	APIAnthropicMessages: func() Adapter { return AnthropicMessages{} },
}

// Names returns the valid API names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// Lookup returns the adapter for an API name. An unknown name is an error
// that lists the valid names.
func Lookup(name string) (Adapter, error) {
	mk, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("protocol: unknown api %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return mk(), nil
}
