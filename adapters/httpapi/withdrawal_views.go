package httpapi

import (
	"github.com/pixgate/pixgate/domain"
)

// withdrawalView is a withdrawal (docs/API.md, Response shapes), field by field and in its
// order, as GET /withdrawal/{id} returns it. errorMessage is null when there is none; the other optional fields are left out until they have a value.
type withdrawalView struct {
	ID              string             `json:"id"`
	Acquirer        string             `json:"acquirer"`
	Amount          int64              `json:"amount"`
	Method          string             `json:"method"`
	WebhookURL      string             `json:"webhookUrl,omitempty"`
	ExternalCode    string             `json:"externalCode,omitempty"`
	CreatedAt       isoTime            `json:"createdAt"`
	Status          string             `json:"status"`
	StatusHistory   []statusEntryView  `json:"statusHistory"`
	UpdatedAt       isoTime            `json:"updatedAt"`
	AmountWithdrawn *int64             `json:"amountWithdrawn,omitempty"`
	ProcessedDate   *isoTime           `json:"processedDate,omitempty"`
	ErrorMessage    *string            `json:"errorMessage"`
	EndToEnd        string             `json:"endToEnd,omitempty"`
	Payer           *accountHolderView `json:"payer,omitempty"`
	Receiver        *accountHolderView `json:"receiver,omitempty"`
	PixKey          pixKeyView         `json:"pixKey"`
	FeeAmount       int64              `json:"feeAmount"`
}

func viewWithdrawal(w *domain.Withdrawal) withdrawalView {
	p := w.Payout()
	return withdrawalView{
		ID: w.ID(), Acquirer: w.Acquirer(), Amount: int64(p.Amount), Method: domain.WithdrawalMethodPIX,
		WebhookURL: p.WebhookURL, ExternalCode: p.ExternalCode, CreatedAt: isoTime(w.CreatedAt()),
		Status: string(w.Status()), StatusHistory: viewHistory(w.History()), UpdatedAt: isoTime(w.UpdatedAt()),
		AmountWithdrawn: centsPtr(w.AmountWithdrawn()), ProcessedDate: isoPtr(w.ProcessedDate()),
		ErrorMessage: nullableString(w.ErrorMessage()), EndToEnd: w.EndToEnd(),
		Payer: viewHolder(p.Payer), Receiver: viewHolder(p.Receiver), PixKey: viewPixKey(p.PixKey),
		FeeAmount: int64(p.Fee),
	}
}

// viewCreatedWithdrawal is the 201 body of POST /withdrawal: the withdrawal as it was stored
// by the request that created it. The first answer shows the fresh withdrawal as it is; a
// replay rebuilds the same body from the stored withdrawal, which may have moved on since, by
// keeping only the status entries dated at the creation (PENDING, and PROCESSING where the
// acquirer took the payout at once) and none of what later transitions set.
func viewCreatedWithdrawal(w *domain.Withdrawal) withdrawalView {
	history := w.History()
	created := history[:1]
	if len(history) > 1 && history[1].Status == domain.WdProcessing && history[1].Date.Equal(w.CreatedAt()) {
		created = history[:2]
	}
	v := viewWithdrawal(w)
	if len(created) == len(history) {
		return v
	}
	last := created[len(created)-1]
	v.Status, v.StatusHistory, v.UpdatedAt = string(last.Status), viewHistory(created), isoTime(last.Date)
	v.AmountWithdrawn, v.ProcessedDate, v.ErrorMessage, v.EndToEnd = nil, nil, nil, ""
	return v
}

// balanceView is the body of GET /balance, in cents.
type balanceView struct {
	Available int64 `json:"available"`
	Blocked   int64 `json:"blocked"`
	Pending   int64 `json:"pending"`
}

func viewBalance(b domain.Balance) balanceView {
	return balanceView{Available: int64(b.Available), Blocked: int64(b.Blocked), Pending: int64(b.Pending)}
}
