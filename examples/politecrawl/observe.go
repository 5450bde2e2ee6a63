package main

import (
	"errors"
	"io"
	"log/slog"
	"strings"
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
