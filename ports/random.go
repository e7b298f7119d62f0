package ports

// Random draws random numbers where no secrecy is needed (the jitter of webhook retries);
// secrets and identifiers have their own ports. Float64 answers a number in [0, 1) and is safe
// for concurrent use.
type Random interface {
	Float64() float64
}
