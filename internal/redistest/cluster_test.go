package redistest

import (
	"context"
	"testing"
)

func TestClusterStarts(t *testing.T) {
	c := StartCluster(t)
	cl := c.Client()
	if err := cl.Set(context.Background(), "{a}x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	n, _ := cl.ClusterInfo(context.Background()).Result()
	t.Log(n[:60])
}
