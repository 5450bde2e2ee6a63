package redisstore

import (
	"context"
	"testing"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// A call tried again after its reply was lost (Redis applied it, then the
// connection broke) must not lose or double its effect: the pop returns
// the same request, and the claim is still this call's.
func TestRetriedCallsAreIdempotent(t *testing.T) {
	srv := redistest.Start(t)
	f := New(srv.Client())
	ctx := context.Background()
	for _, u := range []string{"http://a.test/1", "http://a.test/2"} {
		if err := f.Queue().AddRequest(serial(t, u)); err != nil {
			t.Fatal(err)
		}
	}
	epoch, err := f.Epoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pop := func(token string) string {
		args := append(f.front.tendArgs(0, epoch), token, 0, crawlKeep.Milliseconds())
		v, err := popScript.Run(ctx, f.client, []string{f.meta(0)}, args...).Slice()
		if err != nil || len(v) < 2 {
			t.Fatalf("pop(%q) = %v, %v", token, v, err)
		}
		s, _ := v[1].(string)
		return s
	}
	if a, b := pop("t:1"), pop("t:1"); a != "a.test\n1h1 /1" || b != a {
		t.Errorf("pop(t:1) twice = %q, %q; want the first request twice", a, b)
	}
	if got := pop("t:12"); got != "a.test\n1h1 /2" {
		t.Errorf("pop(t:12) = %q, want the next request (a token that extends another is another call)", got)
	}

	claim := func(token string) int64 {
		v, err := visitedClaim.Run(ctx, f.client, []string{f.crawlKey("visited")}, visitedMember(42), token, crawlKeep.Milliseconds()).Int64()
		if err != nil {
			t.Fatalf("claim(%q): %v", token, err)
		}
		return v
	}
	if a, b, c := claim("m:1"), claim("m:1"), claim("m:2"); a != 1 || b != 1 || c != 0 {
		t.Errorf("claim(m:1), claim(m:1) again, claim(m:2) = %d, %d, %d; want 1, 1, 0", a, b, c)
	}
	if err := f.Storage().Visited(42); err != ErrClaimed {
		t.Errorf("Visited of a claimed request = %v, want ErrClaimed", err)
	}
}
