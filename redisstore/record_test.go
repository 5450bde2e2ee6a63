package redisstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// recordT0 is a fixed instant for records; no test reads the wall clock.
var recordT0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

// recordShapes are records the Cache writes, one of each kind.
func recordShapes() map[string]policy.Record {
	body := []byte("User-agent: *\nDisallow: /private\n")
	return map[string]policy.Record{
		// RFC 9309 §2.3.1.1: a 2xx body, parsed.
		"parsed": {
			State: policy.StateParsed, StatusCode: 200,
			FetchedAt: recordT0, Expires: recordT0.Add(24 * time.Hour),
			GoodState: policy.StateParsed, Body: body,
		},
		// RFC 9309 §2.3.1.1: an empty 2xx body.
		"parsed empty": {
			State: policy.StateParsed, StatusCode: 204,
			FetchedAt: recordT0, Expires: recordT0.Add(time.Hour),
			GoodState: policy.StateParsed,
		},
		// RFC 9309 §2.3.1.2: the body came from a redirect.
		"redirected": {
			State: policy.StateParsed, StatusCode: 200,
			FetchedAt: recordT0, Expires: recordT0.Add(24 * time.Hour),
			GoodState: policy.StateParsed, Body: body,
			URL: "https://www.example.com/robots.txt",
		},
		// RFC 9309 §2.3.1.3: 4xx, allow all.
		"unavailable": {
			State: policy.StateUnavailable, StatusCode: 404,
			FetchedAt: recordT0, Expires: recordT0.Add(24 * time.Hour),
			GoodState: policy.StateUnavailable,
		},
		// RFC 9309 §2.3.1.2: too many redirects, as 404, with its error.
		"unavailable with error": {
			State: policy.StateUnavailable, StatusCode: 301,
			FetchedAt: recordT0, Expires: recordT0.Add(24 * time.Hour),
			GoodState: policy.StateUnavailable,
			Err:       &policy.FetchError{URL: "https://example.com/robots.txt", StatusCode: 301, Err: errors.New("stopped after 5 redirects")},
		},
		// RFC 9309 §2.3.1.4: unreachable, no good copy, no response.
		"unreachable": {
			State:     policy.StateUnreachable,
			FetchedAt: recordT0, Expires: recordT0.Add(time.Minute), RetryAt: recordT0.Add(time.Minute),
			Failures: 1, FailingSince: recordT0,
			Err: &policy.FetchError{URL: "https://example.com/robots.txt", Err: errors.New("dial tcp: connection refused")},
		},
		// RFC 9309 §2.3.1.4: 503 with the last good copy kept.
		"unreachable with last good copy": {
			State: policy.StateUnreachable, StatusCode: 503,
			FetchedAt: recordT0, Expires: recordT0.Add(time.Hour), RetryAt: recordT0.Add(time.Hour),
			Failures: 7, FailingSince: recordT0.Add(-20 * 24 * time.Hour),
			GoodState: policy.StateParsed, Body: body, URL: "https://cdn.example.com/robots.txt",
			Err: &policy.FetchError{URL: "https://example.com/robots.txt", StatusCode: 503},
		},
		// RFC 9309 §2.3.1.4: 429 after an earlier 404.
		"unreachable after unavailable": {
			State: policy.StateUnreachable, StatusCode: 429,
			FetchedAt: recordT0, Expires: recordT0.Add(100 * 365 * 24 * time.Hour), RetryAt: recordT0.Add(100 * 365 * 24 * time.Hour),
			Failures: 2, FailingSince: recordT0.Add(-time.Hour),
			GoodState: policy.StateUnavailable,
			Err:       &policy.FetchError{URL: "https://example.com/robots.txt", StatusCode: 429, Err: errors.New("")},
		},
		// policy.MaxSize: the largest body kept.
		"largest body": {
			State: policy.StateParsed, StatusCode: 200,
			FetchedAt: recordT0, Expires: recordT0.Add(24 * time.Hour),
			GoodState: policy.StateParsed, Body: bytes.Repeat([]byte("Disallow: /x\n"), policy.MaxSize/13),
		},
		"times before 1970": {
			State: policy.StateParsed, FetchedAt: time.Unix(0, math.MinInt64), Expires: time.Unix(-1, 0),
			GoodState: policy.StateParsed, Body: []byte{0, 0xff, '\n'},
		},
	}
}

// recordDiff returns how got differs from want, or "" if it does not. Times
// compare with Equal; Err by URL, status and text; Robots is not compared.
func recordDiff(got, want policy.Record) string {
	var d []string
	add := func(field string, g, w any) { d = append(d, fmt.Sprintf("%s = %v, want %v", field, g, w)) }
	if got.State != want.State {
		add("State", got.State, want.State)
	}
	if got.StatusCode != want.StatusCode {
		add("StatusCode", got.StatusCode, want.StatusCode)
	}
	for _, t := range []struct {
		name      string
		got, want time.Time
	}{{"FetchedAt", got.FetchedAt, want.FetchedAt}, {"Expires", got.Expires, want.Expires}, {"RetryAt", got.RetryAt, want.RetryAt}, {"FailingSince", got.FailingSince, want.FailingSince}} {
		if !t.got.Equal(t.want) || t.got.IsZero() != t.want.IsZero() {
			add(t.name, t.got, t.want)
		}
	}
	if got.Failures != want.Failures {
		add("Failures", got.Failures, want.Failures)
	}
	if got.GoodState != want.GoodState {
		add("GoodState", got.GoodState, want.GoodState)
	}
	if got.URL != want.URL {
		add("URL", got.URL, want.URL)
	}
	if !bytes.Equal(got.Body, want.Body) {
		add("Body", fmt.Sprintf("%d bytes %.20q", len(got.Body), got.Body), fmt.Sprintf("%d bytes %.20q", len(want.Body), want.Body))
	}
	if e := errDiff(got.Err, want.Err); e != "" {
		d = append(d, e)
	}
	return strings.Join(d, "; ")
}

func errDiff(got, want *policy.FetchError) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil || want == nil:
		return fmt.Sprintf("Err = %v, want %v", got, want)
	case got.URL != want.URL || got.StatusCode != want.StatusCode || (got.Err == nil) != (want.Err == nil):
		return fmt.Sprintf("Err = %#v, want %#v", got, want)
	case got.Err != nil && got.Err.Error() != want.Err.Error():
		return fmt.Sprintf("Err.Err = %q, want %q", got.Err, want.Err)
	}
	return ""
}

func TestRecordRoundTrip(t *testing.T) {
	for name, r := range recordShapes() {
		t.Run(name, func(t *testing.T) {
			r.Robots = policy.Parse(r.Body) // not stored
			b, err := encodeRecord(r)
			if err != nil {
				t.Fatalf("encodeRecord: %v", err)
			}
			got, err := decodeRecord(b)
			if err != nil {
				t.Fatalf("decodeRecord(encodeRecord(r)): %v", err)
			}
			if d := recordDiff(got, r); d != "" {
				t.Errorf("decodeRecord(encodeRecord(r)): %s", d)
			}
			if got.Robots != nil {
				t.Errorf("decodeRecord(encodeRecord(r)).Robots = %v, want nil: Robots is not stored", got.Robots)
			}
			if len(b) > len(r.Body)+len(r.URL)+100+errLen(r.Err) {
				t.Errorf("encodeRecord(r) has %d bytes for a %d-byte body: not compact", len(b), len(r.Body))
			}
		})
	}
}

func errLen(e *policy.FetchError) int {
	if e == nil {
		return 0
	}
	n := len(e.URL)
	if e.Err != nil {
		n += len(e.Err.Error())
	}
	return n
}

// TestRecordDecodeCopies checks that a decoded record does not share
// memory with its encoding, which the Redis client may reuse.
func TestRecordDecodeCopies(t *testing.T) {
	r := recordShapes()["unreachable with last good copy"]
	b, err := encodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	clear(b)
	if d := recordDiff(got, r); d != "" {
		t.Errorf("decodeRecord(b), then b cleared: %s", d)
	}
}

func TestRecordEncodeRejects(t *testing.T) {
	good := recordShapes()["parsed"]
	tests := []struct {
		name   string
		change func(r *policy.Record)
		want   string // in the error
	}{
		{"State zero", func(r *policy.Record) { r.State = 0 }, "State"},
		{"State unknown", func(r *policy.Record) { r.State = 9 }, "State"},
		{"GoodState unreachable", func(r *policy.Record) { r.GoodState = policy.StateUnreachable }, "GoodState"},
		{"StatusCode negative", func(r *policy.Record) { r.StatusCode = -1 }, "StatusCode"},
		{"StatusCode four digits", func(r *policy.Record) { r.StatusCode = 1000 }, "StatusCode"},
		{"Failures negative", func(r *policy.Record) { r.Failures = -1 }, "Failures"},
		{"Err.StatusCode negative", func(r *policy.Record) { r.Err = &policy.FetchError{StatusCode: -5} }, "Err.StatusCode"},
		{"Expires after 2262", func(r *policy.Record) { r.Expires = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, "Expires"},
		{"FetchedAt before 1677", func(r *policy.Record) { r.FetchedAt = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }, "FetchedAt"},
		{"Body over MaxSize", func(r *policy.Record) { r.Body = make([]byte, policy.MaxSize+1) }, "Body"},
	}
	for _, tt := range tests {
		r := good
		tt.change(&r)
		b, err := encodeRecord(r)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "redisstore: ") {
			t.Errorf("%s: encodeRecord(r) = %d bytes, %v; want an error naming %s", tt.name, len(b), err, tt.want)
		}
	}
}

func TestRecordDecodeRejects(t *testing.T) {
	good, err := encodeRecord(recordShapes()["unreachable with last good copy"])
	if err != nil {
		t.Fatal(err)
	}
	// Every proper prefix is cut short.
	for n := range len(good) {
		if r, err := decodeRecord(good[:n]); err == nil {
			t.Errorf("decodeRecord(first %d of %d bytes) = %+v, nil; want an error", n, len(good), r)
		}
	}
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	head := []byte{recordVersion, byte(policy.StateParsed), byte(policy.StateParsed), 0}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		b    []byte
		want string // in the error
	}{
		{"empty", nil, "version"},
		{"version 0", cat([]byte{0}, head[1:], uv(0), uv(0), uv(0), uv(0)), "version"},
		{"version 2", cat([]byte{2}, head[1:], uv(0), uv(0), uv(0), uv(0)), "version"},
		{"State zero", cat([]byte{recordVersion, 0, 0, 0}, uv(0), uv(0), uv(0), uv(0)), "State"},
		{"State unknown", cat([]byte{recordVersion, 4, 0, 0}, uv(0), uv(0), uv(0), uv(0)), "State"},
		{"GoodState unreachable", cat([]byte{recordVersion, 1, 3, 0}, uv(0), uv(0), uv(0), uv(0)), "GoodState"},
		{"flags unknown", cat([]byte{recordVersion, 1, 1, 0x40}, uv(0), uv(0), uv(0), uv(0)), "flags"},
		{"error text without Err", cat([]byte{recordVersion, 1, 1, flagErrText}, uv(0), uv(0), uv(0), uv(0)), "flags"},
		{"StatusCode four digits", cat(head, uv(1000), uv(0), uv(0), uv(0)), "StatusCode"},
		{"StatusCode not shortest", cat(head, []byte{0x80, 0x00}, uv(0), uv(0), uv(0)), "StatusCode"},
		{"Failures overflow", cat(head, uv(0), bytes.Repeat([]byte{0xff}, 10), []byte{1}, uv(0), uv(0)), "Failures"},
		{"Expires cut short", cat([]byte{recordVersion, 1, 1, flagExpires}, uv(0), uv(0)), "Expires"},
		{"Expires not shortest", cat([]byte{recordVersion, 1, 1, flagExpires}, uv(0), uv(0), []byte{0x81, 0x80, 0x00}, uv(0), uv(0)), "Expires"},
		{"URL longer than input", cat(head, uv(0), uv(0), uv(5), []byte("abc")), "URL"},
		{"Err.URL huge", cat([]byte{recordVersion, 1, 1, flagErr}, uv(0), uv(0), uv(0), uv(math.MaxUint64)), "Err.URL"},
		{"Err.StatusCode four digits", cat([]byte{recordVersion, 1, 1, flagErr}, uv(0), uv(0), uv(0), uv(0), uv(1234), uv(0)), "Err.StatusCode"},
		{"Body over MaxSize", cat(head, uv(0), uv(0), uv(0), uv(policy.MaxSize+1), make([]byte, policy.MaxSize+1)), "Body"},
		{"Body longer than input", cat(head, uv(0), uv(0), uv(0), uv(10), []byte("x")), "Body"},
		{"bytes after Body", cat(head, uv(0), uv(0), uv(0), uv(1), []byte("xy")), "after Body"},
	}
	for _, tt := range tests {
		r, err := decodeRecord(tt.b)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "redisstore: record: ") {
			t.Errorf("%s: decodeRecord(% x) = %+v, %v; want an error naming %s", tt.name, tt.b[:min(len(tt.b), 24)], r, err, tt.want)
		}
	}
	// The smallest valid record, to show the cases above differ from it
	// only where they say.
	if _, err := decodeRecord(cat(head, uv(0), uv(0), uv(0), uv(0))); err != nil {
		t.Errorf("decodeRecord(smallest record) = %v, want nil", err)
	}
}

// FuzzDecodeRecord checks two invariants of the record encoding:
//
//   - a record built from the fuzz input (with states and counts the Cache
//     writes) survives encodeRecord and decodeRecord unchanged, and
//     encodeRecord rejects exactly what checkRecord rejects;
//   - decodeRecord of arbitrary bytes never panics, and what it accepts
//     encodes back to the same bytes: the encoding is canonical (shortest
//     varints, no trailing bytes, known flags only), so a damaged record
//     cannot pass for another one.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range recordShapes() {
		b, err := encodeRecord(r)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			continue // keep the seed corpus small
		}
		errText := ""
		if r.Err != nil && r.Err.Err != nil {
			errText = r.Err.Err.Error()
		}
		f.Add(b, uint8(r.State), uint8(r.GoodState), r.StatusCode, r.Failures,
			r.FetchedAt.UnixNano(), r.Expires.UnixNano(), r.RetryAt.UnixNano(), r.FailingSince.UnixNano(), uint8(0x3f),
			r.URL, "https://example.com/robots.txt", errText, r.Body)
	}
	f.Add([]byte{}, uint8(0), uint8(0), 0, 0, int64(0), int64(0), int64(0), int64(0), uint8(0), "", "", "", []byte(nil))
	f.Fuzz(func(t *testing.T, data []byte, state, good uint8, status, failures int,
		fetched, expires, retry, failing int64, set uint8, url, errURL, errText string, body []byte) {
		// Arbitrary bytes.
		if r, err := decodeRecord(data); err == nil {
			b, err := encodeRecord(r)
			if err != nil {
				t.Fatalf("encodeRecord(decodeRecord(% x)): %v", data, err)
			}
			if !bytes.Equal(b, data) {
				t.Fatalf("encodeRecord(decodeRecord(% x)) = % x, want the input", data, b)
			}
		}

		// A record built from the input.
		at := func(bit uint8, ns int64) time.Time {
			if set&bit == 0 {
				return time.Time{}
			}
			return time.Unix(0, ns)
		}
		r := policy.Record{
			State: policy.State(state), GoodState: policy.State(good),
			StatusCode: status, Failures: failures,
			FetchedAt: at(1, fetched), Expires: at(2, expires), RetryAt: at(4, retry), FailingSince: at(8, failing),
			URL: url, Body: body,
		}
		if set&16 != 0 {
			r.Err = &policy.FetchError{URL: errURL, StatusCode: status}
			if set&32 != 0 {
				r.Err.Err = errors.New(errText)
			}
		}
		b, err := encodeRecord(r)
		if (err == nil) != (checkRecord(r) == nil) {
			t.Fatalf("encodeRecord(%+v) = %v, checkRecord = %v: they disagree", r, err, checkRecord(r))
		}
		if err != nil {
			return
		}
		got, err := decodeRecord(b)
		if err != nil {
			t.Fatalf("decodeRecord(encodeRecord(%+v)): %v", r, err)
		}
		if d := recordDiff(got, r); d != "" {
			t.Fatalf("decodeRecord(encodeRecord(%+v)): %s", r, d)
		}
	})
}
