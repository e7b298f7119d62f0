package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/pixgate/pixgate/adapters/qr"
)

// serve runs the API until ctx ends (SIGTERM), then stops accepting, lets requests in flight
// finish (up to PIXGATE_SHUTDOWN_TIMEOUT), stops the background work and exits cleanly.
// listening, when set, receives the bound address once the server accepts connections.
func serve(ctx context.Context, cfg Config, stdout, stderr io.Writer, listening func(addr string)) error {
	// Deferred first, so that it writes the lines every other deferred step logs.
	logOut := startLogBuffer(stderr)
	defer logOut.stop()
	log := newLogger(cfg, logOut)
	// Listening comes first: without PIXGATE_PUBLIC_URL, payment page addresses are built from
	// the address the server really listens on (a port 0 becomes the one the system chose).
	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("PIXGATE_ADDR: %w", err)
	}
	defer ln.Close()
	options := []func(*app){func(a *app) { a.publicURL = ownBaseURL(ln.Addr().String()) },
		func(a *app) { a.accessLog = logOut }}
	if cfg.QR.Process {
		renderer, err := startQRProcess(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer func() {
			if err := closeQRProcess(ctx, renderer); err != nil {
				log.Error("closing the QR drawing process", slog.String("error", err.Error()))
			}
		}()
		options = append(options, func(a *app) { a.renderer = renderer })
	}
	a, err := newApp(ctx, cfg, log, options...)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := a.stores.close(closeCtx); err != nil {
			log.Error("closing the store", slog.String("error", err.Error()))
		}
	}()
	// Every address is bound before the seed prints a demo account, so that a busy port stops
	// the start before credentials that would die with it are shown.
	var metricsLn net.Listener
	if cfg.Server.MetricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.Server.MetricsAddr); err != nil {
			return fmt.Errorf("PIXGATE_METRICS_ADDR: %w", err)
		}
		defer metricsLn.Close()
	}
	var callbackLn net.Listener
	if a.callback != nil {
		if callbackLn, err = net.Listen("tcp", cfg.Callback.Addr); err != nil {
			return fmt.Errorf("%s: %w", envCallbackAddr, err)
		}
		defer callbackLn.Close()
	}
	if err := a.seed(ctx, stdout); err != nil {
		return err
	}

	if metricsLn != nil {
		metricsSrv := &http.Server{Handler: a.metrics.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = metricsSrv.Serve(metricsLn) }()
		defer metricsSrv.Close()
	}
	srv := boundedServer(a.server.Handler(), log)

	background, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	waitBackground := a.startBackground(background, log)

	served := make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()
	var callbackSrv *http.Server
	if callbackLn != nil {
		callbackSrv = a.callback.httpServer(log)
		go func() { served <- fmt.Errorf("%s: %w", envCallbackAddr, callbackSrv.ServeTLS(callbackLn, "", "")) }()
		log.Info("acquirer callbacks served with mutual TLS", slog.String("addr", callbackLn.Addr().String()))
	}
	log.Info("pixgate serving", slog.String("addr", ln.Addr().String()), slog.String("store", cfg.Store.Kind), slog.Bool("sandbox", cfg.Sandbox.On))
	if listening != nil {
		listening(ln.Addr().String())
	}

	select {
	case err := <-served:
		if callbackSrv != nil {
			_ = callbackSrv.Close()
		}
		_ = srv.Close()
		stopBackground()
		waitBackground()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
	defer cancel()
	callbackDone := make(chan error, 1)
	if callbackSrv != nil {
		go func() { callbackDone <- callbackSrv.Shutdown(shutdownCtx) }()
	} else {
		callbackDone <- nil
	}
	err = errors.Join(srv.Shutdown(shutdownCtx), <-callbackDone)
	stopBackground()
	waitBackground()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// startQRProcess starts the QR drawing process (this program, as pixgate qr-worker) and draws
// one image with it, so that a system that forbids it stops the start rather than the first
// creation.
func startQRProcess(ctx context.Context, cfg Config, log *slog.Logger) (*qr.ProcessRenderer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("PIXGATE_QR_PROCESS: finding this program to start the QR drawing process: %w (PIXGATE_QR_PROCESS=false draws in this process)", err)
	}
	r, err := qr.NewProcessRenderer(qr.ProcessOptions{Command: []string{self, "qr-worker"}, Workers: cfg.QR.Concurrency, Queue: cfg.QR.Queue,
		Timeout: cfg.QR.Timeout, Log: log, Stderr: &lineLog{log: log, msg: "the QR drawing process"}})
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.Start(startCtx); err != nil {
		_ = closeQRProcess(ctx, r)
		return nil, fmt.Errorf("PIXGATE_QR_PROCESS: starting the QR drawing process: %w (PIXGATE_QR_PROCESS=false draws in this process)", err)
	}
	return r, nil
}

// closeQRProcess ends the drawing process, giving its drawings under way up to 5 s, even when
// ctx has ended (serve's context ends with SIGTERM).
func closeQRProcess(ctx context.Context, r *qr.ProcessRenderer) error {
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return r.Close(closeCtx)
}

// lineLog is an io.Writer that logs each line written to it as a warning: the QR drawing
// process's standard error (it writes nothing unless it fails: a crash's trace) reaches the
// log as the rest of the process's output does. Lines longer than maxLogLine are cut.
type lineLog struct {
	log  *slog.Logger
	msg  string
	line []byte
}

const maxLogLine = 4096

func (l *lineLog) Write(p []byte) (int, error) {
	for _, c := range p {
		if c != '\n' {
			if len(l.line) < maxLogLine {
				l.line = append(l.line, c)
			}
			continue
		}
		l.log.Warn(l.msg, slog.String("stderr", string(l.line)))
		l.line = l.line[:0]
	}
	return len(p), nil
}
