package webhook

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/pixgate/pixgate/ports"
)

func TestRefusalPolicy(t *testing.T) {
	refused := []string{
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254",
		"127.0.0.1", "127.8.9.10", "169.254.169.254", "172.16.0.1", "172.31.255.255",
		"192.168.0.1", "192.0.2.1", "198.18.0.1", "198.51.100.7", "203.0.113.9", "224.0.0.1",
		"239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::7f00:1", "fc00::1", "fd12:3456::1", "fe80::1", "fe80::1%eth0", "ff02::1",
		"ff05::2", "2001:db8::1", "fec0::1", "100::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1",
		"::ffff:0.0.0.0", "::ffff:224.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
		"64:ff9b:1::1", "2002:7f00:1::1", "2002:a00:1::", "2001::1",
	}
	allowed := []string{
		"93.184.216.34", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.15.255.255",
		"172.32.0.1", "192.169.0.1", "11.0.0.1", "223.255.255.255",
		"2606:4700::1111", "2a00:1450:4001::200e", "::ffff:93.184.216.34", "64:ff9b::808:808",
		"2002:5db8:d822::1",
	}
	for _, s := range refused {
		if why := refusal(netip.MustParseAddr(s)); why == "" {
			t.Errorf("%s is allowed, want refused", s)
		}
	}
	for _, s := range allowed {
		if why := refusal(netip.MustParseAddr(s)); why != "" {
			t.Errorf("%s is refused (%s), want allowed", s, why)
		}
	}
	if refusal(netip.Addr{}) == "" {
		t.Error("the zero address is allowed")
	}
}

// The socket's own check is the last line: it must hold for whatever address reaches it.
func TestControlGuardChecksTheAddressConnectedTo(t *testing.T) {
	guard := controlGuard(false)
	for _, addr := range []string{"127.0.0.1:443", "[::1]:443", "[::ffff:10.0.0.1]:443", "169.254.169.254:80", "garbage"} {
		if err := guard("tcp", addr, nil); !errors.Is(err, ports.ErrWebhookAddressRefused) {
			t.Errorf("guard(%s) = %v, want ErrWebhookAddressRefused", addr, err)
		}
	}
	if err := guard("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("guard(public) = %v", err)
	}
	if err := controlGuard(true)("tcp", "127.0.0.1:443", nil); err != nil {
		t.Errorf("guard with AllowPrivate = %v", err)
	}
}
