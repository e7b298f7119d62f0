package httpapi

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// What encoding/json forgives and the API does not: the last of two members with one name
// wins ({"amount":1,"amount":999} would charge 999), and invalid UTF-8 or an escaped lone
// surrogate becomes U+FFFD, so that what was stored is not what was sent. checkStrictJSON
// refuses those bodies before any decoding, in one pass over the bytes.
var (
	errDuplicateMember = errors.New("a member name is repeated in one object")
	errInvalidUTF8     = errors.New("the body is not valid UTF-8")
	errLoneSurrogate   = errors.New("a string holds an escaped lone surrogate")
)

// objectKeysInline is how many member names of one object are compared one by one before
// they go into a map: small objects, the usual case, allocate nothing, and a body of a
// hundred thousand members cannot make the check quadratic.
const objectKeysInline = 16

// strictFrame is one open object or array of the body being checked.
type strictFrame struct {
	object bool
	start  int                 // where this object's names begin in strictScanner.keys
	set    map[string]struct{} // this object's names, once it has more than objectKeysInline
}

type strictScanner struct {
	frames []strictFrame
	keys   [][]byte // member names of the open objects, each object's after the last
}

// checkStrictJSON reports a repeated member name in any object, invalid UTF-8, or an escaped
// lone surrogate. It judges nothing else: a body that is not JSON at all passes through to
// the decoder, which refuses it.
func checkStrictJSON(body []byte) error {
	// Room for the usual body at once, so that the stacks do not grow step by step.
	s := strictScanner{frames: make([]strictFrame, 0, 8), keys: make([][]byte, 0, 32)}
	return s.scan(body)
}

func (s *strictScanner) scan(b []byte) error {
	expectKey := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			end, name, err := s.scanString(b, i, expectKey)
			if err != nil {
				return err
			}
			if expectKey {
				if err := s.addKey(name); err != nil {
					return err
				}
				expectKey = false
			}
			i = end
			continue
		case c == '{':
			s.frames = append(s.frames, strictFrame{object: true, start: len(s.keys)})
			expectKey = true
		case c == '[':
			s.frames = append(s.frames, strictFrame{})
			expectKey = false
		case c == '}' || c == ']':
			if n := len(s.frames); n > 0 {
				f := s.frames[n-1]
				if f.object {
					s.keys = s.keys[:f.start]
				}
				s.frames = s.frames[:n-1]
			}
			expectKey = false
		case c == ',':
			expectKey = len(s.frames) > 0 && s.frames[len(s.frames)-1].object
		case c == ':':
			expectKey = false
		case c >= utf8.RuneSelf:
			return errInvalidUTF8 // outside a string no JSON byte is above ASCII
		}
		i++
	}
	return nil
}

// addKey records a member name of the innermost object and reports whether it was there.
func (s *strictScanner) addKey(name []byte) error {
	if len(s.frames) == 0 {
		return nil
	}
	f := &s.frames[len(s.frames)-1]
	if f.set != nil {
		if _, dup := f.set[string(name)]; dup {
			return errDuplicateMember
		}
		f.set[string(name)] = struct{}{}
		return nil
	}
	names := s.keys[f.start:]
	for _, k := range names {
		if bytes.Equal(k, name) {
			return errDuplicateMember
		}
	}
	if len(names) < objectKeysInline {
		s.keys = append(s.keys, name)
		return nil
	}
	f.set = make(map[string]struct{}, 2*objectKeysInline)
	for _, k := range names {
		f.set[string(k)] = struct{}{}
	}
	f.set[string(name)] = struct{}{}
	return nil
}

// scanString checks the string that opens at b[i] and returns the index after its closing
// quote. When name is wanted it also returns the string's value: the raw bytes when it has
// no escape, a decoded copy otherwise ("a" and "\u0061" are one name).
func (s *strictScanner) scanString(b []byte, i int, name bool) (int, []byte, error) {
	start := i + 1
	escaped := false
	for i = start; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			if !name {
				return i + 1, nil, nil
			}
			if !escaped {
				return i + 1, b[start:i], nil
			}
			return i + 1, s.decodeName(b[start:i]), nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return len(b), nil, nil // unterminated: the decoder refuses it
			}
			if b[i+1] != 'u' {
				i += 2
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				return len(b), nil, nil // a bad escape: the decoder refuses it
			}
			i += 6
			switch {
			case utf16.IsSurrogate(r) && r < 0xdc00: // a high surrogate needs a low one next
				lo, ok := rune(0), false
				if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					lo, ok = hex4(b, i+2)
				}
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return 0, nil, errLoneSurrogate
				}
				i += 6
			case utf16.IsSurrogate(r):
				return 0, nil, errLoneSurrogate
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, nil, errInvalidUTF8
			}
			i += size
		}
	}
	return len(b), nil, nil // unterminated: the decoder refuses it
}

// hex4 reads the four hexadecimal digits of a \u escape at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// decodeName decodes the escapes of a member name already checked by scanString.
func (s *strictScanner) decodeName(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			i++
			continue
		}
		switch e := raw[i+1]; e {
		case 'u':
			r, _ := hex4(raw, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				lo, _ := hex4(raw, i+2)
				r = utf16.DecodeRune(r, lo)
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // " \ /
			out = append(out, e)
		}
		i += 2
	}
	return out
}
