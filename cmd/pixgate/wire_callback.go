package main

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
)

// callbackListener is the mutual-TLS listener of the PSP's callbacks
// (PIXGATE_ACQUIRER_CALLBACK_ADDR): its routes, and the TLS settings that authenticate the
// PSP by its client certificate. serve listens for it beside the API.
type callbackListener struct {
	server *httpapi.Server
	tls    *tls.Config
}

// wireCallback builds the callback listener around the acquirer's notifications, the same use
// case the main address's bearer route applies; nothing without PIXGATE_ACQUIRER_CALLBACK_ADDR.
// A certificate, key or CA file that cannot be used stops the start, naming its variable.
func (a *app) wireCallback(acq httpapi.AcquirerDeps) error {
	if a.cfg.Callback.Addr == "" {
		return nil
	}
	tlsCfg, err := callbackTLS(a.cfg.Callback)
	if err != nil {
		return err
	}
	a.callback = &callbackListener{
		server: httpapi.NewAcquirerCallback(httpapi.Config{MaxBodyBytes: a.cfg.Server.MaxRequestBytes}, acq,
			httpapi.CallbackDeps{Observer: a.metrics, Logger: a.log}),
		tls: tlsCfg,
	}
	return nil
}

// httpServer is the callback listener's server: bounded as the API's is, with its TLS
// settings (serve it with ServeTLS and no files).
func (c *callbackListener) httpServer(log *slog.Logger) *http.Server {
	srv := boundedServer(c.server.Handler(), log)
	srv.TLSConfig = c.tls
	return srv
}

// boundedServer is an http.Server of handler with the limits every address of pixgate's
// keeps: time to send headers and the whole request, time to answer, idle connections, and the
// size of headers (bodies are bounded by the handlers' middleware).
func boundedServer(handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
