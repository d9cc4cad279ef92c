package ladder

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// AppendHistory appends r as one JSON line to the history file at path,
// creating it when missing. Each line is one Result in its JSON schema
// (ladderresult.LadderSchemaVersion, kind "ladder").
func AppendHistory(path string, r Result) error { return AppendJSON(path, r) }

// AppendJSON appends v as one JSON line to the history file at path: a
// Result, or a value that carries one (a fleet's ladder, whose extra
// fields readers of Results ignore).
func AppendJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("ladder history %s: encode: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("ladder history: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("ladder history %s: write: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("ladder history %s: close: %w", path, err)
	}
	return nil
}

// ReadHistory returns the last n results of the history file at path
// (n <= 0: all), oldest first. A missing file is an empty history; a line
// that does not parse, or is not a ladder's, is skipped and counted in
// skipped. Lines of the flat format written before schema_version decode
// too (ladderresult.LadderResult.UnmarshalJSON).
func ReadHistory(path string, n int) (results []Result, skipped int, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("ladder history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			skipped++
			continue
		}
		results = append(results, r)
		if n > 0 && len(results) > n {
			results = results[1:]
		}
	}
	if err := sc.Err(); err != nil {
		return results, skipped, fmt.Errorf("ladder history %s: read: %w", path, err)
	}
	return results, skipped, nil
}
