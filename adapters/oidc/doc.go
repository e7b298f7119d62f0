// Package oidc talks to an upstream OpenID Connect provider (Keycloak or alike) when pixgate's
// token endpoint delegates to it: Exchanger trades client credentials for an access token at
// the provider's token endpoint (the client-credentials grant), and Verifier checks the
// provider's tokens against its published JSON Web Key Set.
//
// It implements ports.CredentialExchanger and ports.TokenVerifier, translating every network
// and protocol failure into the ports' errors. It knows nothing of pixgate's accounts: a token
// names its client, and the application finds the account that owns that client.
package oidc
