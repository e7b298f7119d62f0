// Package sandbox is the simulated outside world of a pixgate run with PIXGATE_SANDBOX=true:
// Banco Central, the payers' banks and the acquirer, played so that a merchant can try every
// path of the API without money moving. Production wiring never builds anything of it unless
// the sandbox is on.
//
// It provides, behind the same ports and use cases a real integration uses:
//
//   - the acquirer (Acquirer, a ports.Acquirer) that answers the devolutions pixgate asks for,
//     and its payout API (Payouts, a ports.Payouts), through which the payout outbox pays
//     withdrawals out as it would through a PSP's;
//   - the PIX directory (Directory, a ports.PixDirectory) that names the owner of a payout's
//     key, and the parties of its payments (Payer, ReceivingAccount);
//   - the steering the /sandbox routes offer (TransactionSteering, WithdrawalSteering): paying a charge, opening and
//     deciding MED disputes, failing a refund, failing, rejecting and returning a payout. Each
//     step is an application.Transition with a domain transition of its own, so it goes
//     through the same storage, events and ledger as a real acquirer's notification;
//   - the acquirer's back office: SettleTransactions, a job that completes refunds and MED
//     refunds by themselves after the settle delay, as the acquirer's callback would; and
//     Payouts, which answers a payout made once the settle delay has passed.
//
// It knows the domain, the ports and the application's generic Transition; application knows
// nothing of it.
package sandbox
