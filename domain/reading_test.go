package domain_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/pixgate/pixgate/domain"
)

// TestTransactionReadingReadsWhatTheGettersCopy compares every accessor of TransactionReading
// with the copies Order and Pix hand out, on transactions at every step of their paths, and
// checks that what it appends is the caller's: changing it leaves the transaction alone.
func TestTransactionReadingReadsWhatTheGettersCopy(t *testing.T) {
	for _, path := range txPaths {
		t.Run(path.name, func(t *testing.T) {
			tx, _ := txAt(t, validOrder(), path)
			want := tx.Record()
			o, rd := tx.Order(), tx.Reading()
			if rd.PaymentMethod() != o.PaymentMethod || rd.WebhookURL() != o.WebhookURL ||
				rd.ExternalCode() != o.ExternalCode || rd.IsInfoProduct() != o.IsInfoProduct {
				t.Fatalf("order fields %v %q %q %v, Order() %+v", rd.PaymentMethod(), rd.WebhookURL(), rd.ExternalCode(), rd.IsInfoProduct(), o)
			}
			if c, ok := rd.Customer(); ok != (o.Customer != nil) || ok && c != *o.Customer {
				t.Fatalf("customer %+v %v, Order() %+v", c, ok, o.Customer)
			}
			if s, ok := rd.Seller(); ok != (o.Seller != nil) || ok && s != *o.Seller {
				t.Fatalf("seller %+v %v, Order() %+v", s, ok, o.Seller)
			}
			if a, ok := rd.Address(); ok != (o.Address != nil) || ok && a != *o.Address {
				t.Fatalf("address %+v %v, Order() %+v", a, ok, o.Address)
			}
			if rd.ItemCount() != len(o.Items) {
				t.Fatalf("%d items, Order() %d", rd.ItemCount(), len(o.Items))
			}
			for i, it := range o.Items {
				if rd.Item(i) != it {
					t.Fatalf("item %d %+v, Order() %+v", i, rd.Item(i), it)
				}
			}
			h := tx.History()
			if rd.StatusCount() != len(h) {
				t.Fatalf("%d statuses, History() %d", rd.StatusCount(), len(h))
			}
			for i, e := range h {
				d, ok := rd.StatusDurationMillis(i)
				want := domain.DurationMillis(h, i)
				if rd.StatusEntry(i) != e || ok != (want != nil) || ok && d != *want {
					t.Fatalf("status %d %+v %d %v, History() %+v %v", i, rd.StatusEntry(i), d, ok, e, want)
				}
			}
			md := rd.AppendMetadata([]byte("x"))
			if rd.HasMetadata() != (len(o.Metadata) > 0) || !bytes.Equal(md[1:], o.Metadata) {
				t.Fatalf("metadata %v %s, Order() %s", rd.HasMetadata(), md[1:], o.Metadata)
			}
			p := tx.Pix()
			png := rd.AppendQRCodePNG(nil)
			if rd.HasPix() != (p != nil) {
				t.Fatalf("HasPix %v, Pix() %v", rd.HasPix(), p)
			}
			if p != nil && (rd.PixURI() != p.URI || !rd.PixExpiresAt().Equal(p.ExpiresAt) || !bytes.Equal(png, p.QRCodePNG)) {
				t.Fatalf("pix %q %v %d bytes, Pix() %+v", rd.PixURI(), rd.PixExpiresAt(), len(png), p)
			}
			if p == nil && (rd.PixURI() != "" || !rd.PixExpiresAt().IsZero() || len(png) != 0) {
				t.Fatalf("pix %q %v %d bytes without a Pix response", rd.PixURI(), rd.PixExpiresAt(), len(png))
			}
			for i := range md {
				md[i] = 'X'
			}
			for i := range png {
				png[i] = 0
			}
			if got := tx.Record(); !reflect.DeepEqual(got, want) {
				t.Fatalf("changing what the reading appended changed the transaction:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
