package pix

import (
	"strings"
	"unicode"
)

// plainASCII reduces s to the printable ASCII (0x20 to 0x7E) that bank apps accept in a BR
// Code's text fields. Letters of Latin-1 and Latin Extended-A lose their accents ("São Miguel
// do Ó" becomes "Sao Miguel do O"), which covers Portuguese and its neighbours; combining marks
// of decomposed text are dropped with everything else outside printable ASCII. Any run of white
// space becomes one space and the ends are trimmed, so a tab or a no-break space in a configured
// name does not glue two words together. The case is kept: the manual asks for no particular
// case and the published examples keep the merchant's own.
//
// The standard library has no Unicode decomposition, and this small table spares the module a
// dependency for the few hundred letters that matter here.
func plainASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		var repl string
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r >= 0x21 && r <= 0x7E:
			repl = string(r)
		case r >= 0xC0 && r <= 0xFF:
			repl = latin1[r-0xC0]
		case r >= 0x100 && r <= 0x17F:
			repl = latinExtendedA(r)
		case r == 'ª':
			repl = "a"
		case r == 'º':
			repl = "o"
		}
		if repl == "" {
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(repl)
	}
	return b.String()
}

// cut keeps the first n characters of an ASCII string and trims a space the cut left at the end.
func cut(s string, n int) string {
	if len(s) > n {
		s = strings.TrimRight(s[:n], " ")
	}
	return s
}

// latin1 transliterates U+00C0 to U+00FF; "" drops the character (× and ÷ are not letters).
var latin1 = [64]string{
	"A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I", "I",
	"D", "N", "O", "O", "O", "O", "O", "", "O", "U", "U", "U", "U", "Y", "TH", "ss",
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
	"d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "y",
}

// latinExtendedAPlain holds the base letter of each of U+0100 to U+017F; the four ligatures,
// marked '_', are spelled out by latinExtendedA.
const latinExtendedAPlain = "AaAaAaCcCcCcCcDdDdEeEeEeEeEeGgGgGgGgHhHhIiIiIiIiIi__JjKkkLlLlLlLlLlNnNnNnnNnOoOoOo__RrRrRrSsSsSsSsTtTtTtUuUuUuUuUuUuWwYyYZzZzZzs"

func latinExtendedA(r rune) string {
	switch r {
	case 'Ĳ':
		return "IJ"
	case 'ĳ':
		return "ij"
	case 'Œ':
		return "OE"
	case 'œ':
		return "oe"
	}
	return latinExtendedAPlain[r-0x100 : r-0x100+1]
}

// Compile-time check that the table has one letter per code point of the block.
var _ = [1]struct{}{}[len(latinExtendedAPlain)-(0x17F-0x100+1)]
