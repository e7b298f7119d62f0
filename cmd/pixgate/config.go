package main

import (
	"fmt"
	"strings"
)

// Config is every setting of pixgate, read once at start from PIXGATE_* variables, in groups:
// each group's struct declares its variables beside it (its settings method), and those
// declarations are the one source of the values, of `pixgate help settings` and of the
// Configuration table of docs/OPERATIONS.md.
type Config struct {
	Server     ServerConfig     // the API's listener, its logs and its public address (config_server.go)
	Store      StoreConfig      // where everything is kept (config_server.go)
	Auth       AuthConfig       // API tokens and the credentials that get them (config_auth.go)
	Limits     LimitsConfig     // rate limits of charge creation and token requests (config_auth.go)
	Pix        PixConfig        // the PIX key, the merchant, fees, payload locations (config_pix.go)
	QR         QRConfig         // drawing the QR images (config_pix.go)
	Page       PageConfig       // the payment page (config_pix.go)
	Webhooks   WebhooksConfig   // webhooks to the merchants (config_server.go)
	Sandbox    SandboxConfig    // the sandbox acquirer (config_server.go)
	Acquirer   AcquirerConfig   // the PSP's API Pix (config_acquirer.go)
	Devolution DevolutionConfig // devolutions sent to the acquirer (config_devolutions.go)
	Reconcile  ReconcileConfig  // reconciliation with the acquirer (reconcile.go)
	Payouts    PayoutsConfig    // who pays withdrawals out, and how (config_payouts.go)
	Callback   CallbackConfig   // the PSP's callbacks and pixgate's webhook there (config_callback.go)
}

// setting is one PIXGATE_* variable: its name, its default, what it does, and how it is read.
// doc is a little Markdown: `code`, and links to other documents of docs/ ([PSP.md,
// Payouts](PSP.md#payouts)); help prints it plain (settingsHelp). set parses a value into the
// Config whose settings method made the setting.
type setting struct {
	name string
	def  string
	doc  string
	set  func(v string) error
}

// settingGroup is one group of Config: its field's name, what it is about, and its variables.
type settingGroup struct {
	name     string
	about    string
	settings []setting
}

// groups are c's settings, group by group, each bound to c's fields.
func (c *Config) groups() []settingGroup {
	return []settingGroup{
		{"Server", "The API's listener, its logs and the address payers reach.", c.Server.settings()},
		{"Store", "Where accounts, transactions and the ledger are kept.", c.Store.settings()},
		{"Auth", "API tokens, the credentials that get them, and an upstream provider.", c.Auth.settings()},
		{"Limits", "Rate limits of charge creation and of token requests.", c.Limits.settings()},
		{"Pix", "The PIX key, the merchant, the fees, and the payload locations of dynamic charges.", c.Pix.settings()},
		{"QR", "Drawing the QR images of charges.", c.QR.settings()},
		{"Page", "The payment page.", c.Page.settings()},
		{"Webhooks", "Webhooks to the merchants.", c.Webhooks.settings()},
		{"Sandbox", "The sandbox acquirer, for development.", c.Sandbox.settings()},
		{"Acquirer", "The PSP's API Pix: where it is and how pixgate proves who it is there.", c.Acquirer.settings()},
		{"Devolution", "Refunds and late payments' returns sent to the acquirer.", c.Devolution.settings()},
		{"Reconcile", "Reconciliation with the acquirer's API Pix.", c.Reconcile.settings()},
		{"Payouts", "Who pays withdrawals out, and how pixgate reaches the payout API.", c.Payouts.settings()},
		{"Callback", "The PSP's callbacks (the bearer secret's route, the mutual-TLS listener) and pixgate's webhook registered at the PSP.", c.Callback.settings()},
	}
}

// settings lists every variable pixgate reads, group after group; the values it reads go
// nowhere (help and the checks of the variables' names use it).
func settings() []setting {
	var all []setting
	for _, g := range new(Config).groups() {
		all = append(all, g.settings...)
	}
	return all
}

// loadConfig reads every setting from getenv; the first bad value stops it with a one-line
// message naming the variable (and never its value, which may be a secret).
func loadConfig(getenv func(string) string) (Config, error) {
	c := Config{Server: ServerConfig{MaxRequestBytes: 1 << 20}}
	for _, g := range c.groups() {
		for _, s := range g.settings {
			v, ok := strings.TrimSpace(getenv(s.name)), true
			if v == "" {
				v, ok = s.def, false
			}
			if err := s.set(v); err != nil {
				where := "value"
				if !ok {
					where = "default"
				}
				return Config{}, fmt.Errorf("%s: invalid %s: %v", s.name, where, err)
			}
		}
	}
	if err := c.check(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// check tells what the settings need of each other, once every value is read; payoutConfig
// also decides the payout provider and fills in the payout settings that default to the
// acquirer's.
func (c *Config) check() error {
	if c.Store.Kind == "mongo" && len(c.Store.CredentialKey) == 0 {
		return fmt.Errorf("PIXGATE_CREDENTIAL_KEY: required with PIXGATE_STORE=mongo, so that stored secrets still match after a restart")
	}
	if err := acquirerConfig(*c); err != nil {
		return err
	}
	if err := payoutConfig(c); err != nil {
		return err
	}
	if err := pixLocationConfig(*c); err != nil {
		return err
	}
	if err := callbackConfig(c); err != nil {
		return err
	}
	return c.Auth.Upstream.check()
}
