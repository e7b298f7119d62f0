package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/pixgate/pixgate/ports"
)

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

type rangeRule struct {
	prefix netip.Prefix
	reason string
}

// rules reads prefix and reason pairs, in order: the first match gives the reason.
func rules(pairs ...string) []rangeRule {
	out := make([]rangeRule, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, rangeRule{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// Ranges no webhook may reach: they are this host, its networks, or nowhere on the internet.
var (
	refusedV4 = rules(
		"0.0.0.0/8", "unspecified",
		"10.0.0.0/8", "private",
		"100.64.0.0/10", "shared (carrier-grade NAT)",
		"127.0.0.0/8", "loopback",
		"169.254.0.0/16", "link-local",
		"172.16.0.0/12", "private",
		"192.0.0.0/24", "reserved",
		"192.0.2.0/24", "reserved for documentation",
		"192.168.0.0/16", "private",
		"198.18.0.0/15", "reserved for benchmarking",
		"198.51.100.0/24", "reserved for documentation",
		"203.0.113.0/24", "reserved for documentation",
		"224.0.0.0/4", "multicast",
		"240.0.0.0/4", "reserved", // broadcast included
	)
	refusedV6 = rules(
		"::/128", "unspecified",
		"::1/128", "loopback",
		"::/96", "IPv4-compatible (deprecated)",
		"64:ff9b:1::/48", "local-use NAT64",
		"100::/64", "discard-only",
		"2001::/32", "Teredo",
		"2001:db8::/32", "reserved for documentation",
		"fc00::/7", "private (unique local)",
		"fe80::/10", "link-local",
		"fec0::/10", "site-local (deprecated)",
		"ff00::/8", "multicast",
		"5f00::/16", "reserved (SRv6)",
		"3fff::/20", "reserved for documentation",
		"2001:2::/48", "reserved for benchmarking",
		"2001:10::/28", "reserved (ORCHID)",
		"2001:20::/28", "reserved (ORCHIDv2)",
		"::ffff:0:0:0/96", "IPv4-translated",
	)
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // embeds an IPv4 address in its last 4 bytes
	sixToFour = netip.MustParsePrefix("2002::/16")    // embeds an IPv4 address in bytes 2 to 5
)

// refusal says why a is refused as a webhook destination, or "" when it may be reached.
func refusal(a netip.Addr) string {
	if !a.IsValid() {
		return "not an address"
	}
	a = a.WithZone("").Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if a.Is4() {
		for _, r := range refusedV4 {
			if r.prefix.Contains(a) {
				return r.reason
			}
		}
		return ""
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		if why := refusal(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
			return "NAT64 of an address " + why
		}
		return ""
	case sixToFour.Contains(a):
		if why := refusal(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
			return "6to4 of an address " + why
		}
		return ""
	}
	for _, r := range refusedV6 {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	return ""
}

// errRefused is what a refusal says, to the merchant reading the attempt and to logs alike:
// never the address a host resolved to nor why that address is refused, since naming an
// internal address (or its kind) maps our network for whoever chose the host.
var errRefused = fmt.Errorf("%w: the host resolves to an address webhooks may not reach", ports.ErrWebhookAddressRefused)

// connectError says how connecting failed without the address tried (net.OpError names it).
func connectError(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, ports.ErrWebhookAddressRefused):
		return errRefused // the socket's own check refused it
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("the host refused the connection")
	case errors.As(err, &ne) && ne.Timeout():
		return errors.New("connecting to the host timed out")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return errors.New("could not connect to the host")
}

// guardedDialer connects only to addresses the policy accepts, resolving host names itself so
// that the address checked is the address connected to.
type guardedDialer struct {
	allowPrivate bool
	resolver     Resolver
	dial         func(ctx context.Context, network, address string) (net.Conn, error)
}

func (g *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = g.resolver.LookupNetIP(ctx, lookupNetwork(network), host)
		if err != nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
				return nil, fmt.Errorf("host %s not found", host)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The resolver's own error names the DNS server's address: not for the answer.
			return nil, fmt.Errorf("resolving host %s failed", host)
		}
	}
	var refused, failed error
	for _, a := range addrs {
		if !g.allowPrivate {
			if why := refusal(a); why != "" {
				refused = errRefused
				continue
			}
		}
		// Unmapped, so that the socket's own check and the connection see the same address.
		conn, err := g.dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		failed = connectError(err)
	}
	switch {
	case failed != nil:
		return nil, failed
	case refused != nil:
		return nil, refused
	}
	return nil, fmt.Errorf("host %s has no address", host)
}

func lookupNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	}
	return "ip"
}

// controlGuard checks the address a socket is about to connect to: the last word, whatever path
// the address took to get there.
func controlGuard(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return errRefused
		}
		if why := refusal(ap.Addr()); why != "" {
			return errRefused
		}
		return nil
	}
}
