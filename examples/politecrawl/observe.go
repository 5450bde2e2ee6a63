package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/internal/promtext"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// logLevel is the -v flag: "-v" turns the Guard's log on at Info, "-v=debug"
// at Debug (deferrals and links not followed too), "-v=false" off.
type logLevel struct {
	on    bool
	level slog.Level
}

func (l *logLevel) IsBoolFlag() bool { return true }

func (l *logLevel) String() string {
	if l == nil || !l.on {
		return "false"
	}
	return strings.ToLower(l.level.String())
}

func (l *logLevel) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "info":
		l.on, l.level = true, slog.LevelInfo
	case "debug":
		l.on, l.level = true, slog.LevelDebug
	case "warn":
		l.on, l.level = true, slog.LevelWarn
	case "false":
		l.on = false
	default:
		return errors.New("want -v, -v=debug, -v=warn or -v=false")
	}
	return nil
}

// logger returns the Guard's Logger for the flag: text lines on w, or nil.
func (l *logLevel) logger(w io.Writer) *slog.Logger {
	if !l.on {
		return nil
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l.level}))
}

// serveMetrics serves g's Stats in Prometheus's text format on
// http://addr/metrics until stop is called. It is written by package
// promtext, which names the same series as the robotsprom module's
// Collector, so that this command does not need client_golang.
func serveMetrics(addr string, g *robotsmw.Guard) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promtext.Handler(g.Stats))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/metrics", func() { srv.Close() }, nil
}
