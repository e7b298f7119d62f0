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
	a, closeApp, err := assembleServed(ctx, cfg, log, logOut, ln.Addr().String())
	if err != nil {
		return err
	}
	defer closeApp()
	// Every address is bound before the seed prints a demo account, so that a busy port stops
	// the start before credentials that would die with it are shown.
	metricsLn, callbackLn, err := listenBeside(cfg, a)
	if err != nil {
		return err
	}
	defer closeListeners(metricsLn, callbackLn)
	if err := a.seed(ctx, stdout); err != nil {
		return err
	}

	if metricsLn != nil {
		metricsSrv := &http.Server{Handler: a.metrics.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = metricsSrv.Serve(metricsLn) }()
		defer metricsSrv.Close()
	}
	srv := boundedServer(a.server.Handler(), log)

	background, cancelBackground := context.WithCancel(context.WithoutCancel(ctx))
	waitBackground := a.startBackground(background, log)
	stopBackground := func() { cancelBackground(); waitBackground() }

	served := make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()
	callbackSrv := a.serveCallbacks(callbackLn, served, log)
	log.Info("pixgate serving", slog.String("addr", ln.Addr().String()), slog.String("store", cfg.Store.Kind), slog.Bool("sandbox", cfg.Sandbox.On))
	if listening != nil {
		listening(ln.Addr().String())
	}
	return shutDownWhenDone(ctx, cfg.Server.ShutdownTimeout, log, served, srv, callbackSrv, stopBackground)
}

// assembleServed builds the app serve runs: its pages' addresses on listenAddr (without
// PIXGATE_PUBLIC_URL), its access log on logOut, and its QR images drawn by the drawing process
// with PIXGATE_QR_PROCESS. closeApp closes the store, then the drawing process.
func assembleServed(ctx context.Context, cfg Config, log *slog.Logger, logOut io.Writer, listenAddr string) (a *app, closeApp func(), err error) {
	options := []func(*app){func(a *app) { a.publicURL = ownBaseURL(listenAddr) },
		func(a *app) { a.accessLog = logOut }}
	closeRenderer := func() {}
	if cfg.QR.Process {
		renderer, err := startQRProcess(ctx, cfg, log)
		if err != nil {
			return nil, nil, err
		}
		closeRenderer = func() {
			if err := closeQRProcess(ctx, renderer); err != nil {
				log.Error("closing the QR drawing process", slog.String("error", err.Error()))
			}
		}
		options = append(options, func(a *app) { a.renderer = renderer })
	}
	if a, err = newApp(ctx, cfg, log, options...); err != nil {
		closeRenderer()
		return nil, nil, err
	}
	return a, func() {
		defer closeRenderer()
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := a.stores.close(closeCtx); err != nil {
			log.Error("closing the store", slog.String("error", err.Error()))
		}
	}, nil
}

// listenBeside binds the addresses served beside the API's: the metrics' with
// PIXGATE_METRICS_ADDR and the acquirer callbacks' with a callback listener; nil where there is
// none. On an error it closes what it bound.
func listenBeside(cfg Config, a *app) (metricsLn, callbackLn net.Listener, err error) {
	if cfg.Server.MetricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.Server.MetricsAddr); err != nil {
			return nil, nil, fmt.Errorf("PIXGATE_METRICS_ADDR: %w", err)
		}
	}
	if a.callback != nil {
		if callbackLn, err = net.Listen("tcp", cfg.Callback.Addr); err != nil {
			closeListeners(metricsLn)
			return nil, nil, fmt.Errorf("%s: %w", envCallbackAddr, err)
		}
	}
	return metricsLn, callbackLn, nil
}

// closeListeners closes each listener that is not nil.
func closeListeners(lns ...net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// serveCallbacks serves the acquirer callbacks with mutual TLS on ln, sending the server's end
// to served; with no listener (no callback listener configured) it serves nothing and returns nil.
func (a *app) serveCallbacks(ln net.Listener, served chan<- error, log *slog.Logger) *http.Server {
	if ln == nil {
		return nil
	}
	srv := a.callback.httpServer(log)
	go func() { served <- fmt.Errorf("%s: %w", envCallbackAddr, srv.ServeTLS(ln, "", "")) }()
	log.Info("acquirer callbacks served with mutual TLS", slog.String("addr", ln.Addr().String()))
	return srv
}

// shutDownWhenDone waits until a server stops serving or ctx ends. A server that stopped ends
// the others at once and its error is returned; the end of ctx (SIGTERM) stops accepting and
// lets requests in flight finish, up to timeout. Either way the background work is stopped
// before it returns. callbackSrv may be nil.
func shutDownWhenDone(ctx context.Context, timeout time.Duration, log *slog.Logger, served <-chan error, srv, callbackSrv *http.Server, stopBackground func()) error {
	select {
	case err := <-served:
		if callbackSrv != nil {
			_ = callbackSrv.Close()
		}
		_ = srv.Close()
		stopBackground()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	callbackDone := make(chan error, 1)
	if callbackSrv != nil {
		go func() { callbackDone <- callbackSrv.Shutdown(shutdownCtx) }()
	} else {
		callbackDone <- nil
	}
	err := errors.Join(srv.Shutdown(shutdownCtx), <-callbackDone)
	stopBackground()
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
