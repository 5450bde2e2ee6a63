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
	for _, r := range []string{"first", "second"} {
		if err := f.Queue().AddRequest([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{f.crawlKey("queue"), f.crawlKey("popped"), f.heldKey(f.ID()), f.crawlKey("visited"), f.crawlKey("holders")}
	pop := func(token string) string {
		v, err := queuePop.Run(ctx, f.client, keys, f.ID(), token, crawlKeep.Milliseconds()).Text()
		if err != nil || len(v) < 8 {
			t.Fatalf("pop(%q) = %q, %v", token, v, err)
		}
		return v[8:] // after the request's id
	}
	if a, b := pop("t:1"), pop("t:1"); a != "first" || b != "first" {
		t.Errorf("pop(t:1) twice = %q, %q; want the same request twice", a, b)
	}
	if got := pop("t:12"); got != "second" {
		t.Errorf("pop(t:12) = %q, want the next request (a token that extends another is another call)", got)
	}
	if n := f.client.LLen(ctx, keys[0]).Val(); n != 0 {
		t.Errorf("queue holds %d after two pops, want 0", n)
	}

	claim := func(token string) int64 {
		v, err := visitedClaim.Run(ctx, f.client, []string{f.crawlKey("visited"), f.heldKey(f.ID())}, visitedMember(42), token, crawlKeep.Milliseconds()).Int64()
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
