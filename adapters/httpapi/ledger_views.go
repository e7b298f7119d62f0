package httpapi

import (
	"strconv"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// statementView is the body of GET /balance/entries: one page, newest first, and the cursor of
// the next one (null on the last page).
type statementView struct {
	Data       []entryView `json:"data"`
	NextCursor *string     `json:"nextCursor"`
}

// entryView is one line of the statement. available and blocked are the signed changes the
// entry made to the merchant's two balances (0 for the one it left alone); balanceAfter is
// both balances once it applied.
type entryView struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	CreatedAt    isoTime          `json:"createdAt"`
	ResourceType string           `json:"resourceType"`
	ResourceID   string           `json:"resourceId"`
	Available    int64            `json:"available"`
	Blocked      int64            `json:"blocked"`
	BalanceAfter balanceAfterView `json:"balanceAfter"`
}

// balanceAfterView is a merchant's two ledger balances, in cents.
type balanceAfterView struct {
	Available int64 `json:"available"`
	Blocked   int64 `json:"blocked"`
}

func viewEntry(e domain.Entry) entryView {
	d := e.Delta()
	return entryView{
		ID: e.ID, Type: string(e.Type), CreatedAt: isoTime(e.CreatedAt), ResourceType: string(e.Resource),
		ResourceID: e.ResourceID, Available: int64(d.Available), Blocked: int64(d.Blocked),
		BalanceAfter: balanceAfterView{Available: int64(e.BalanceAfter.Available), Blocked: int64(e.BalanceAfter.Blocked)},
	}
}

// entryCSVHeader is the first row of the CSV export; each entry is then one row of the same
// columns, amounts in integer cents.
var entryCSVHeader = []string{"id", "type", "createdAt", "resourceType", "resourceId",
	"available", "blocked", "balanceAfterAvailable", "balanceAfterBlocked"}

func entryCSVRow(e domain.Entry) []string {
	v := viewEntry(e)
	at, _ := v.CreatedAt.MarshalText()
	return []string{v.ID, v.Type, string(at), v.ResourceType, v.ResourceID,
		strconv.FormatInt(v.Available, 10), strconv.FormatInt(v.Blocked, 10),
		strconv.FormatInt(v.BalanceAfter.Available, 10), strconv.FormatInt(v.BalanceAfter.Blocked, 10)}
}

func unixNano(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := t.UnixNano()
	return &n
}
