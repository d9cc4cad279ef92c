package protocol

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// chatScan reads one chat chunk in a single pass without reflection or
// allocation. Every method returns false when the input is not valid JSON
// or is anything the scanner does not read exactly as encoding/json would;
// the caller then falls back to encoding/json.
type chatScan struct {
	b     []byte
	i     int
	depth int
}

// maxScanDepth is the deepest nesting the scanner reads; deeper chunks go to
// encoding/json.
const maxScanDepth = 32

func (s *chatScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *chatScan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// open consumes the opening bracket c of an object or array.
func (s *chatScan) open(c byte) bool {
	if s.peek() != c || s.depth >= maxScanDepth {
		return false
	}
	s.i++
	s.depth++
	return true
}

// more reports whether another member or element follows in the object or
// array closed by end, consuming the separating comma or the closing bracket.
func (s *chatScan) more(end byte, first *bool) (more, ok bool) {
	s.ws()
	c := s.peek()
	if c == end {
		s.i++
		s.depth--
		return false, true
	}
	if !*first {
		if c != ',' {
			return false, false
		}
		s.i++
		s.ws()
	}
	*first = false
	return true, true
}

// key reads a member name and its colon. plain is false when the name has
// escapes or non-ASCII bytes; upper when it has upper-case letters:
// encoding/json might then match it to a field case-insensitively.
func (s *chatScan) key() (k []byte, plain, upper, ok bool) {
	k, esc, ok := s.str()
	if !ok {
		return nil, false, false, false
	}
	s.ws()
	if s.peek() != ':' {
		return nil, false, false, false
	}
	s.i++
	s.ws()
	plain = !esc
	for _, c := range k {
		if c >= 0x80 {
			plain = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	return k, plain, upper, true
}

// foldsTo reports whether the ASCII name k, lower-cased, is one of names.
func foldsTo(k []byte, names []string) bool {
	var buf [32]byte
	if len(k) > len(buf) {
		return false // longer than any field name
	}
	low := buf[:len(k)]
	for i, c := range k {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return slices.Index(names, string(low)) >= 0
}

// str reads a string and returns its raw contents (between the quotes) and
// whether they hold escapes.
func (s *chatScan) str() (raw []byte, esc, ok bool) {
	b := s.b
	if s.peek() != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s.i = j + 1
			return b[start:j], esc, true
		case c == '\\':
			esc = true
			j++
			if j >= len(b) {
				return nil, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return nil, false, false
				}
				j += 4
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

// text reads a string encoding/json would decode to the same bytes: no
// escapes, valid UTF-8.
func (s *chatScan) text() ([]byte, bool) {
	raw, esc, ok := s.str()
	return raw, ok && !esc && utf8.Valid(raw)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// num reads a number; integer reports whether it is a plain integer
// literal (no fraction or exponent).
func (s *chatScan) num() (raw []byte, integer, ok bool) {
	b, j := s.b, s.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j >= len(b):
		return nil, false, false
	case b[j] == '0':
		j++
	case '1' <= b[j] && b[j] <= '9':
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	default:
		return nil, false, false
	}
	integer = true
	if j < len(b) && b[j] == '.' {
		integer = false
		j++
		if j >= len(b) || !isDigit(b[j]) {
			return nil, false, false
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		integer = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			return nil, false, false
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	raw = b[s.i:j]
	s.i = j
	return raw, integer, true
}

func (s *chatScan) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// null reads a null if one is next.
func (s *chatScan) null() bool { return s.peek() == 'n' && s.lit("null") }

// skip reads and discards any value.
func (s *chatScan) skip() bool {
	switch s.peek() {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{':
		return s.seq('{', func() bool {
			_, _, _, ok := s.key()
			return ok && s.skip()
		})
	case '[':
		return s.seq('[', s.skip)
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	_, _, ok := s.num()
	return ok
}

// seq reads an array ('[') or an object ('{'), calling elem for each
// element or member; elem must read it whole (a member: its key and value).
func (s *chatScan) seq(open byte, elem func() bool) bool {
	if !s.open(open) {
		return false
	}
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	for first := true; ; {
		more, ok := s.more(end, &first)
		if !ok || !more {
			return ok
		}
		if !elem() {
			return false
		}
	}
}

// int reads an integer field: null leaves it as it is; anything but a plain
// integer that fits is left to encoding/json.
func (s *chatScan) int(v *int) bool {
	if s.null() {
		return true
	}
	raw, integer, ok := s.num()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseInt(string(raw), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*v = int(n)
	return true
}

// members reads an object member by member: field is called with each
// plain known-or-unknown name, positioned at its value, and must read the
// value; a name seen twice or one that is not plain ends the scan.
func (s *chatScan) members(names []string, field func(i int) bool) bool {
	if s.null() {
		return true
	}
	var seen uint32
	return s.seq('{', func() bool {
		k, plain, upper, ok := s.key()
		if !ok || !plain {
			return false
		}
		i := slices.Index(names, string(k))
		if i < 0 && upper && foldsTo(k, names) {
			return false // encoding/json would match it case-insensitively
		}
		if i < 0 {
			return s.skip()
		}
		if seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		return field(i)
	})
}

var (
	chatTopNames     = []string{"model", "choices", "usage", "error"}
	chatChoiceNames  = []string{"delta", "finish_reason"}
	chatDeltaNames   = []string{"content", "reasoning_content", "reasoning"}
	chatUsageNames   = []string{"prompt_tokens", "completion_tokens", "completion_tokens_details", "prompt_tokens_details"}
	chatDetailsNames = []string{"reasoning_tokens"}
	chatPromptNames  = []string{"cached_tokens"}
)

// chunk reads a whole chunk (nothing but white space may follow it) into f;
// the model name only when wantModel.
func (s *chatScan) chunk(f *chatFields, wantModel bool) bool {
	if s.peek() != '{' || !s.members(chatTopNames, func(i int) bool { return s.top(i, f, wantModel) }) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *chatScan) top(i int, f *chatFields, wantModel bool) bool {
	switch i {
	case 0: // model
		if s.peek() != '"' || !wantModel {
			return s.skip()
		}
		raw, ok := s.text()
		if ok {
			f.model = string(raw)
		}
		return ok
	case 1: // choices
		if s.null() {
			return true
		}
		return s.seq('[', func() bool {
			return s.members(chatChoiceNames, func(i int) bool { return s.choice(i, f) })
		})
	case 2: // usage
		if s.peek() == '{' {
			f.usage = true
		}
		return s.members(chatUsageNames, func(i int) bool {
			switch i {
			case 0:
				return s.int(&f.prompt)
			case 1:
				return s.int(&f.completion)
			case 3:
				return s.members(chatPromptNames, func(int) bool {
					if s.null() {
						return true
					}
					f.cachedSet = true
					return s.int(&f.cached)
				})
			}
			return s.members(chatDetailsNames, func(int) bool { return s.int(&f.reasoningTokens) })
		})
	}
	// error: kept raw, as json.RawMessage keeps it
	start := s.i
	if !s.skip() {
		return false
	}
	f.errRaw = s.b[start:s.i]
	return true
}

func (s *chatScan) choice(i int, f *chatFields) bool {
	if i == 0 { // delta
		return s.members(chatDeltaNames, func(i int) bool {
			if s.peek() != '"' {
				return s.skip()
			}
			raw, _, ok := s.str()
			if ok && len(raw) > 0 {
				if i == 0 {
					f.content = true
				} else {
					f.reasoning = true
				}
			}
			return ok
		})
	}
	// finish_reason
	if s.null() {
		return true
	}
	raw, ok := s.text()
	if ok && len(raw) > 0 && f.finish == "" {
		f.finish = finishString(raw)
	}
	return ok
}
