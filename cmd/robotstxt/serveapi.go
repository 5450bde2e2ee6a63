package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
)

// Bounds of one API request, so that a script cannot make the server
// hold unbounded work: a robots.txt body is read up to maxRead, as the
// check and lint commands do.
const (
	maxAPIBody = 3*maxRead + 1<<20 // two robots.txt bodies (diff) and the URL list
	maxURLs    = 1000
	maxAgents  = 50
	// maxChecks bounds the verdicts of one request (URLs times agents),
	// and so the size of its answer with maxPatternShown.
	maxChecks = 10000
	// maxCheckWork bounds the time one request's checks may take: a
	// hostile robots.txt (thousands of wildcard rules) against long URLs
	// costs milliseconds a check, linear but not small.
	maxCheckWork = 10 * time.Second
	// maxPatternShown is the longest rule pattern an answer repeats; a
	// longer one is cut, with "…" (its line number finds it whole).
	maxPatternShown = 256
)

// An apiError is a mistake in an API request: answered 400 with its text.
type apiError struct{ msg string }

func (e apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return apiError{fmt.Sprintf(format, args...)}
}

// apiHandler turns fn, which reads a request of type Req and returns a
// response of type Resp, into a handler of JSON requests: it answers
// 415 to another Content-Type (so that a form of another site cannot post
// to it without a CORS preflight, which it does not answer), 400 with
// {"error": ...} to a malformed request, and the response as JSON.
func apiHandler[Req, Resp any](fn func(ctx context.Context, req *Req) (*Resp, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			respondJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "send a JSON body with Content-Type: application/json"})
			return
		}
		req := new(Req)
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(req); err != nil {
			var maxErr *http.MaxBytesError
			if errors.As(err, &maxErr) {
				respondJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": fmt.Sprintf("%v: more than %d bytes", errTooLarge, maxAPIBody)})
				return
			}
			respondJSON(w, http.StatusBadRequest, map[string]string{"error": "malformed JSON request: " + err.Error()})
			return
		}
		if _, err := dec.Token(); err != io.EOF {
			respondJSON(w, http.StatusBadRequest, map[string]string{"error": "malformed JSON request: more than one value"})
			return
		}
		resp, err := fn(r.Context(), req)
		var aerr apiError
		switch {
		case errors.As(err, &aerr):
			respondJSON(w, http.StatusBadRequest, map[string]string{"error": aerr.msg})
			return
		case err != nil:
			respondJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		status := http.StatusOK
		if sc, ok := any(resp).(interface{ httpStatus() int }); ok {
			status = sc.httpStatus()
		}
		respondJSON(w, status, resp)
	}
}

func respondJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
