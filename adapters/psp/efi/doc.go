// Package efi is pixgate's adapter for Efí's payout API ("envio de Pix"): a ports.Payouts on
// the shared PSP transport (adapters/psp: OAuth 2.0 client credentials over mutual TLS, the
// token cached, retries of what may be repeated). Banco Central's API Pix has no standard for
// sending a PIX, so each PSP's payout API has an adapter of its own; this is Efí's, written
// from its published API:
//
//   - PUT {API}/v3/gn/pix/{idEnvio} with {"valor", "pagador": {"chave"}, "favorecido":
//     {"chave"}} sends a payout and answers 201 {"idEnvio", "e2eId", "valor", "horario",
//     "status": "EM_PROCESSAMENTO"}. The idEnvio is pixgate's (1 to 35 characters
//     [a-zA-Z0-9]): a second PUT with it answers 409 (id_envio_duplicado), so repeating a PUT
//     whose outcome is unknown never pays twice. Any other 4xx ({"nome", "mensagem"}) refuses
//     the payout: nothing was sent.
//   - GET {API}/v2/gn/pix/enviados/id-envio/{idEnvio} reads it back: {"endToEndId",
//     "idEnvio", "valor", "status", ...} with status EM_PROCESSAMENTO, REALIZADO or
//     NAO_REALIZADO; 404 when Efí has no payout under the id.
//
// Efí also notifies each payout's end (REALIZADO, NAO_REALIZADO) through the webhook of the
// paying key, beside the PIX received; the application reads the payout back when told
// (application.PayOutWithdrawals.Notice), so a notice's content is never trusted.
//
// What Efí answers beyond these members is ignored; a status other than the three is passed on
// as it is, for the application to log and read back later. Errors follow ports.Payouts: a
// refusal is a *ports.PayoutRefusedError whose reason is Efí's mensagem and nome, never a
// secret. The package must not know the domain's withdrawals, the application or any other
// adapter but the transport.
//
// Package efitest, beside it, is a fake of this API for tests, mounted on psptest.
package efi
