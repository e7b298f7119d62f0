package main

import "time"

// DevolutionConfig tunes the devolution outbox (wire_devolutions.go).
type DevolutionConfig struct {
	// Check is how long a devolution the acquirer is still making waits before it is read
	// back (PIXGATE_ACQUIRER_DEVOLUTION_CHECK_SECONDS).
	Check time.Duration
}

// settings are the settings of the devolution outbox.
func (d *DevolutionConfig) settings() []setting {
	return []setting{
		{"PIXGATE_ACQUIRER_DEVOLUTION_CHECK_SECONDS", "300", "Seconds between two readings of a devolution (a refund, a late payment's return) the acquirer is still making (and the longest wait before one whose outcome is unknown is read back).", seconds(&d.Check, 1, 86400)},
	}
}
