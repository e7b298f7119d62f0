package paypage

import "testing"

func TestPageLanguage(t *testing.T) {
	for _, c := range []struct{ accept, want string }{
		{"", "pt-BR"},
		{"pt-BR,pt;q=0.9", "pt-BR"},
		{"en", "en"},
		{"en-US,en;q=0.9", "en"},
		{"en-US,en;q=0.9,pt-BR;q=0.95", "en"},
		{"pt-BR;q=0.8,en;q=0.9", "en"},
		{"fr-FR,fr;q=0.9,en;q=0.5", "en"},
		{"fr-FR,de", "pt-BR"},
		{"en;q=0", "pt-BR"},
		{"*", "pt-BR"},
		{"EN-gb", "en"},
		{"en;q=abc,pt", "pt-BR"},
	} {
		t.Run(c.accept+" reads as "+c.want, func(t *testing.T) {
			if got := pageLanguage(c.accept); got != c.want {
				t.Fatalf("pageLanguage(%q) = %q", c.accept, got)
			}
		})
	}
}
