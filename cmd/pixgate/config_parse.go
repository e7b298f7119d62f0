package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// The parsers of the settings: each takes the field a variable sets and answers how a value is
// read into it, with the error (never the value, which may be a secret) that refuses it.

// text keeps the value as it is, empty included.
func text(dst *string) func(string) error {
	return func(v string) error {
		*dst = v
		return nil
	}
}

// optional leaves its field alone when the value is empty, and reads it with parse otherwise.
func optional(parse func(string) error) func(string) error {
	return func(v string) error {
		if v == "" {
			return nil
		}
		return parse(v)
	}
}

func nonEmpty(dst *string) func(string) error {
	return func(v string) error {
		if v == "" {
			return fmt.Errorf("must not be empty")
		}
		*dst = v
		return nil
	}
}

// words splits the value at spaces.
func words(dst *[]string) func(string) error {
	return func(v string) error {
		*dst = strings.Fields(v)
		return nil
	}
}

func hostPort(dst *string) func(string) error {
	return func(v string) error {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("must be host:port")
		}
		*dst = v
		return nil
	}
}

func oneOf(dst *string, allowed ...string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if v == a {
				*dst = v
				return nil
			}
		}
		return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
	}
}

func boolean(dst *bool) func(string) error {
	return func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("must be true or false")
		}
		*dst = b
		return nil
	}
}

func intIn(v string, min, max int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, fmt.Errorf("must be a whole number from %d to %d", min, max)
	}
	return n, nil
}

// whole reads a whole number from min to max.
func whole[T int | int64 | uint64](dst *T, min, max int64) func(string) error {
	return func(v string) error {
		n, err := intIn(v, min, max)
		*dst = T(n)
		return err
	}
}

// seconds reads a whole number of seconds from min to max.
func seconds(dst *time.Duration, min, max int64) func(string) error {
	return func(v string) error {
		n, err := intIn(v, min, max)
		*dst = time.Duration(n) * time.Second
		return err
	}
}

// rate reads a number of requests a second, from 0 (no limit) to a million.
func rate(dst *float64) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1e6 {
			return fmt.Errorf("must be a number from 0 to 1000000")
		}
		*dst = f
		return nil
	}
}

// duration reads a duration above 0 and at most an hour.
func duration(dst *time.Duration) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Hour {
			return fmt.Errorf("must be a duration such as 5s, above 0 and at most 1h")
		}
		*dst = d
		return nil
	}
}

// durationIn reads a duration from min to max; refused is the whole error.
func durationIn(dst *time.Duration, min, max time.Duration, refused string) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < min || d > max {
			return fmt.Errorf("%s", refused)
		}
		*dst = d
		return nil
	}
}

// httpURL keeps an http(s) URL, or empty.
func httpURL(dst *string) func(string) error {
	return func(v string) error {
		*dst = v
		if v == "" || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "http://") {
			return nil
		}
		return fmt.Errorf("must be an http(s) URL")
	}
}
