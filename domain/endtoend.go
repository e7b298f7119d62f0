package domain

import (
	"crypto/rand"
	"time"
)

// SandboxISPB is the fictitious participant code of the sandbox acquirer.
const SandboxISPB = "99999999"

// NewEndToEndID makes an identifier in the format of Banco Central's end-to-end ids: a prefix
// letter ('E' for a payment, 'D' for a refund), the 8-digit ISPB of the institution, the
// minute in UTC as yyyyMMddHHmm, and 11 random alphanumerics (32 characters in all).
func NewEndToEndID(prefix byte, ispb string, at time.Time) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var random [11]byte
	if _, err := rand.Read(random[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on a supported OS
	}
	for i, b := range random {
		random[i] = alphabet[int(b)%len(alphabet)]
	}
	return string(prefix) + ispb + at.UTC().Format("200601021504") + string(random[:])
}
