package redisstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// recordVersion is the first byte of every encoded record. A member that
// meets a version it does not know treats the record as damaged (not
// found) and fetches robots.txt again, so a fleet can be upgraded member
// by member.
const recordVersion = 1

// Flags of an encoded record: which times are set and whether Err is.
const (
	flagFetchedAt = 1 << iota
	flagExpires
	flagRetryAt
	flagFailingSince
	flagErr          // Err != nil
	flagErrText      // Err.Err != nil
	knownRecordFlags = 1<<iota - 1
)

// maxRecordStatus bounds StatusCode and Err.StatusCode: an HTTP status
// code has three digits (RFC 9110 §15).
const maxRecordStatus = 999

// encodeRecord returns the encoding of r that a fleet keeps in Redis, all
// of r but Robots, which the reader parses again from Body:
//
//	version    byte (recordVersion)
//	State      byte
//	GoodState  byte
//	flags      byte (flagFetchedAt, ... flagErrText)
//	StatusCode uvarint
//	Failures   uvarint
//	FetchedAt, Expires, RetryAt, FailingSince, each when its flag is set:
//	           varint Unix nanoseconds (a zero time has no bytes)
//	URL        uvarint length, bytes
//	Err, when flagErr: URL (uvarint length, bytes), StatusCode (uvarint),
//	           and when flagErrText the error's text (uvarint length, bytes)
//	Body       uvarint length, bytes
//
// Every varint has its shortest form, so one record has one encoding. Err
// is kept as its URL, status and error text: [decodeRecord] returns a
// *policy.FetchError whose Err is errors.New of that text. Times lose their
// location and monotonic reading; they compare Equal.
//
// encodeRecord fails for a record that decodeRecord would reject: a State
// or GoodState this package does not know, a negative or too large
// count, a Body over policy.MaxSize or a time outside 1677–2262.
func encodeRecord(r policy.Record) ([]byte, error) {
	if err := checkRecord(r); err != nil {
		return nil, err
	}
	times := [...]time.Time{r.FetchedAt, r.Expires, r.RetryAt, r.FailingSince}
	var flags byte
	for i, t := range times {
		if !t.IsZero() {
			flags |= 1 << i
		}
	}
	n := 4 + 2*binary.MaxVarintLen64 + len(times)*binary.MaxVarintLen64 + binary.MaxVarintLen64 + len(r.URL) + binary.MaxVarintLen64 + len(r.Body)
	if r.Err != nil {
		flags |= flagErr
		n += 2*binary.MaxVarintLen64 + len(r.Err.URL)
		if r.Err.Err != nil {
			flags |= flagErrText
			n += binary.MaxVarintLen64 + len(r.Err.Err.Error())
		}
	}
	b := make([]byte, 0, n)
	b = append(b, recordVersion, byte(r.State), byte(r.GoodState), flags)
	b = binary.AppendUvarint(b, uint64(r.StatusCode))
	b = binary.AppendUvarint(b, uint64(r.Failures))
	for _, t := range times {
		if !t.IsZero() {
			b = binary.AppendVarint(b, t.UnixNano())
		}
	}
	b = appendRecordString(b, r.URL)
	if r.Err != nil {
		b = appendRecordString(b, r.Err.URL)
		b = binary.AppendUvarint(b, uint64(r.Err.StatusCode))
		if r.Err.Err != nil {
			b = appendRecordString(b, r.Err.Err.Error())
		}
	}
	b = binary.AppendUvarint(b, uint64(len(r.Body)))
	b = append(b, r.Body...)
	return b, nil
}

// checkRecord returns an error naming what encodeRecord cannot keep in r.
func checkRecord(r policy.Record) error {
	if err := checkState("State", r.State, false); err != nil {
		return err
	}
	if err := checkState("GoodState", r.GoodState, true); err != nil {
		return err
	}
	if r.StatusCode < 0 || r.StatusCode > maxRecordStatus {
		return fmt.Errorf("redisstore: record: StatusCode %d out of range", r.StatusCode)
	}
	if r.Failures < 0 {
		return fmt.Errorf("redisstore: record: Failures %d out of range", r.Failures)
	}
	if r.Err != nil && (r.Err.StatusCode < 0 || r.Err.StatusCode > maxRecordStatus) {
		return fmt.Errorf("redisstore: record: Err.StatusCode %d out of range", r.Err.StatusCode)
	}
	for _, t := range [...]struct {
		name string
		t    time.Time
	}{{"FetchedAt", r.FetchedAt}, {"Expires", r.Expires}, {"RetryAt", r.RetryAt}, {"FailingSince", r.FailingSince}} {
		// Unix nanoseconds fill an int64 from 1677 to 2262; UnixNano of a
		// time outside does not turn back into it. The Cache writes times
		// near now, and a Retry-After of at most 100 years
		// (policy.RetryAfter), so they fit.
		if !t.t.IsZero() && !time.Unix(0, t.t.UnixNano()).Equal(t.t) {
			return fmt.Errorf("redisstore: record: %s %v out of range", t.name, t.t)
		}
	}
	if len(r.Body) > policy.MaxSize {
		return fmt.Errorf("redisstore: record: Body of %d bytes, more than policy.MaxSize", len(r.Body))
	}
	return nil
}

// checkState returns an error unless s is a state the Cache writes: parsed,
// unavailable or unreachable for a record's State; parsed, unavailable or
// zero (no good copy) for its GoodState.
func checkState(name string, s policy.State, good bool) error {
	switch {
	case s == policy.StateParsed || s == policy.StateUnavailable:
	case s == policy.StateUnreachable && !good:
	case s == 0 && good:
	default:
		return fmt.Errorf("redisstore: record: %s %v unknown", name, s)
	}
	return nil
}

func appendRecordString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeRecord returns the record that encodeRecord encoded as b, with
// Robots nil. It never panics: damaged input (cut short, with bytes left
// over, a version, state or flag it does not know, a varint not in its
// shortest form, a count or time out of range, a Body over
// policy.MaxSize) gives an error naming the field at fault. What it
// accepts, encodeRecord encodes back to b.
//
// Body, URL and the error's text are copies: they do not refer to b.
func decodeRecord(b []byte) (policy.Record, error) {
	d := recordDecoder{b: b}
	var r policy.Record
	if v := d.byte("version"); d.err == nil && v != recordVersion {
		return policy.Record{}, fmt.Errorf("redisstore: record: version %d unknown", v)
	}
	r.State = policy.State(d.byte("State"))
	r.GoodState = policy.State(d.byte("GoodState"))
	flags := d.byte("flags")
	if d.err == nil && flags&^knownRecordFlags != 0 {
		return policy.Record{}, fmt.Errorf("redisstore: record: flags %#x unknown", flags)
	}
	if d.err == nil && flags&(flagErr|flagErrText) == flagErrText {
		return policy.Record{}, errors.New("redisstore: record: flags: error text without Err")
	}
	r.StatusCode = d.int("StatusCode", maxRecordStatus)
	r.Failures = d.int("Failures", math.MaxInt)
	r.FetchedAt = d.time("FetchedAt", flags&flagFetchedAt != 0)
	r.Expires = d.time("Expires", flags&flagExpires != 0)
	r.RetryAt = d.time("RetryAt", flags&flagRetryAt != 0)
	r.FailingSince = d.time("FailingSince", flags&flagFailingSince != 0)
	r.URL = string(d.bytes("URL", math.MaxInt))
	if flags&flagErr != 0 {
		r.Err = &policy.FetchError{}
		r.Err.URL = string(d.bytes("Err.URL", math.MaxInt))
		r.Err.StatusCode = d.int("Err.StatusCode", maxRecordStatus)
		if flags&flagErrText != 0 {
			r.Err.Err = errors.New(string(d.bytes("Err.Err", math.MaxInt)))
		}
	}
	if body := d.bytes("Body", policy.MaxSize); len(body) > 0 {
		r.Body = append([]byte(nil), body...)
	}
	if d.err == nil && len(d.b) > 0 {
		return policy.Record{}, fmt.Errorf("redisstore: record: %d bytes after Body", len(d.b))
	}
	if d.err != nil {
		return policy.Record{}, d.err
	}
	if err := checkState("State", r.State, false); err != nil {
		return policy.Record{}, err
	}
	if err := checkState("GoodState", r.GoodState, true); err != nil {
		return policy.Record{}, err
	}
	return r, nil
}

// A recordDecoder reads an encoded record field by field. After its first error
// it reads nothing more and keeps that error.
type recordDecoder struct {
	b   []byte // what is left to read
	err error
}

func (d *recordDecoder) fail(field, problem string) {
	if d.err == nil {
		d.err = fmt.Errorf("redisstore: record: %s: %s", field, problem)
	}
}

func (d *recordDecoder) byte(field string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail(field, "cut short")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// uvarint reads an unsigned varint in its shortest form.
func (d *recordDecoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	switch {
	case n == 0:
		d.fail(field, "cut short")
		return 0
	case n < 0:
		d.fail(field, "varint overflows 64 bits")
		return 0
	case n > 1 && d.b[n-1] == 0:
		// The last byte of a longer form adds nothing: not the shortest.
		d.fail(field, "varint not in its shortest form")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a uvarint of at most max.
func (d *recordDecoder) int(field string, max int) int {
	v := d.uvarint(field)
	if d.err == nil && v > uint64(max) {
		d.fail(field, fmt.Sprintf("%d out of range", v))
		return 0
	}
	return int(v)
}

// time reads a time if set, else returns the zero time.
func (d *recordDecoder) time(field string, set bool) time.Time {
	if !set {
		return time.Time{}
	}
	u := d.uvarint(field)
	if d.err != nil {
		return time.Time{}
	}
	// Undo binary.AppendVarint's zig-zag.
	n := int64(u >> 1)
	if u&1 != 0 {
		n = ^n
	}
	return time.Unix(0, n)
}

// bytes reads a length of at most max and that many bytes. The result
// refers to the recordDecoder's input.
func (d *recordDecoder) bytes(field string, max int) []byte {
	n := d.uvarint(field)
	if d.err != nil {
		return nil
	}
	switch {
	case n > uint64(max):
		d.fail(field, fmt.Sprintf("length %d over the limit of %d", n, max))
		return nil
	case n > uint64(len(d.b)):
		d.fail(field, fmt.Sprintf("length %d, %d bytes left", n, len(d.b)))
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}
