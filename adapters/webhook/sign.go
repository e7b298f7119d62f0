package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// secretPrefix starts every Standard Webhooks secret; the rest is the key in base64.
const secretPrefix = "whsec_"

// Sign computes the webhook-signature header of a message: for each secret, "v1," and the base64
// of HMAC-SHA256 over "id.timestamp.body" (timestamp in Unix seconds), keyed with the secret's
// base64-decoded part after "whsec_"; several signatures are separated by spaces, as during a
// secret rotation. A secret that is not "whsec_" followed by standard base64 is an error whose
// text does not show it.
func Sign(secrets []string, id string, timestamp time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", errors.New("webhook signing: no secret")
	}
	signed := id + "." + strconv.FormatInt(timestamp.Unix(), 10) + "."
	sigs := make([]string, 0, len(secrets))
	for i, secret := range secrets {
		key, err := decodeSecret(secret)
		if err != nil {
			return "", fmt.Errorf("webhook signing: secret %d: %w", i+1, err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(signed))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// decodeSecret takes the key out of "whsec_<base64>". Standard base64 with padding, the only
// form the Standard Webhooks libraries read, so that every receiver can verify what we sign.
func decodeSecret(secret string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return nil, errors.New(`not a "whsec_" secret`)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, errors.New("key is not standard base64")
	}
	if len(key) == 0 {
		return nil, errors.New("empty key")
	}
	return key, nil
}
