package redisstore

import (
	"errors"
	"fmt"
)

// ErrCrawlLost is wrapped by the error that stops a member when the
// crawl's state in Redis vanished (Redis restarted without its data, a
// key was deleted, Clear ran) or was replaced by another crawl's: going on
// would fetch some pages twice and others never, and report success.
var ErrCrawlLost = errors.New("redisstore: the crawl's state in Redis is gone")

// A CrawlLostError says which part of the crawl's state was found changed:
// the shard, the epoch (the crawl's identity) the member joined and the
// one found, "" if none. It unwraps to ErrCrawlLost. It is a plain value,
// safe to share once returned.
type CrawlLostError struct {
	Prefix string
	Shard  int
	Joined string
	Found  string
}

func (e *CrawlLostError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("redisstore: the crawl %q (epoch %s) is gone from Redis: shard %d has no state (Redis restarted without persistence, or the keys were deleted); its queue is lost, so this member stops", e.Prefix, e.Joined, e.Shard)
	}
	return fmt.Sprintf("redisstore: the crawl %q changed under this member: shard %d belongs to epoch %s, not %s (another crawl was started under the same prefix); this member stops", e.Prefix, e.Shard, e.Found, e.Joined)
}

func (e *CrawlLostError) Unwrap() error { return ErrCrawlLost }
