package paypage

import (
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// formatReais writes an amount as Brazilian money: R$ 1.234,56 (en: R$ 1,234.56).
func formatReais(c domain.Cents, lang string) string {
	thousands, decimal := ".", ","
	if lang == "en" {
		thousands, decimal = ",", "."
	}
	n := int64(c)
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	units := strconv.FormatInt(n/100, 10)
	var grouped strings.Builder
	for i, d := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			grouped.WriteString(thousands)
		}
		grouped.WriteRune(d)
	}
	cents := n % 100
	return "R$ " + sign + grouped.String() + decimal + string(rune('0'+cents/10)) + string(rune('0'+cents%10))
}

// formatCountdown writes a duration as m:ss or h:mm:ss, as page.js does.
func formatCountdown(d time.Duration) string {
	s := int64(max(0, (d+time.Second-1)/time.Second))
	h, m, sec := s/3600, (s%3600)/60, s%60
	pad := func(n int64) string {
		if n < 10 {
			return "0" + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10)
	}
	if h > 0 {
		return strconv.FormatInt(h, 10) + ":" + pad(m) + ":" + pad(sec)
	}
	return pad(m) + ":" + pad(sec)
}
