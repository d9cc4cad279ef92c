package workload

import (
	"fmt"
	"log/slog"
)

// Sources that hold prompt text describe themselves by kind and size only,
// whichever way they are printed or logged.

func (p *PromptFile) String() string       { return fmt.Sprintf("file(%d prompts)", len(p.prompts)) }
func (p *PromptFile) GoString() string     { return p.String() }
func (p *PromptFile) LogValue() slog.Value { return slog.StringValue(p.String()) }

func (d *Dataset) String() string       { return fmt.Sprintf("dataset(%d conversations)", len(d.convs)) }
func (d *Dataset) GoString() string     { return d.String() }
func (d *Dataset) LogValue() slog.Value { return slog.StringValue(d.String()) }

func (m *Mix) String() string {
	s := "mix("
	for i, c := range m.classes {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s×%g", c.Name, c.Weight)
	}
	return s + ")"
}
func (m *Mix) GoString() string     { return m.String() }
func (m *Mix) LogValue() slog.Value { return slog.StringValue(m.String()) }
