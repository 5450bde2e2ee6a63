package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Cluster is a Redis Cluster of three masters (no replicas), each a
// redis-server process run by a test, on free loopback ports.
type Cluster struct {
	Addrs []string

	t    testing.TB
	cmds []*exec.Cmd
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartCluster starts three redis-server processes with cluster mode on,
// joins them with redis-cli --cluster create (the 16384 slots split
// between them), waits until the cluster is ready and stops it when the
// test ends. It skips the test, saying why, when redis-server or
// redis-cli is not installed.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install -y redis-server); the cluster tests need a real Redis Cluster", bin)
		}
	}
	c := &Cluster{t: t}
	t.Cleanup(c.stop)
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		port, bus := freePort(t), freePort(t)
		cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", i)),
			"--dir", dir, "--dbfilename", fmt.Sprintf("dump-%d.rdb", i), "--save", "", "--appendonly", "no",
			"--daemonize", "no", "--loglevel", "warning")
		dieWithTest(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		c.cmds = append(c.cmds, cmd)
		c.Addrs = append(c.Addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	for _, a := range c.Addrs {
		waitPing(t, a)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, a := range c.Addrs {
		cl := redis.NewClient(&redis.Options{Addr: a})
		for i := 0; ; i++ {
			info, err := cl.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if i > 400 {
				cl.Close()
				t.Fatalf("Redis Cluster node %s not ready: %v\n%s", a, err, info)
			}
			time.Sleep(25 * time.Millisecond)
		}
		cl.Close()
	}
	return c
}

// waitPing waits until the server at addr answers.
func waitPing(t testing.TB, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if i > 200 {
			t.Fatalf("redis-server on %s did not answer: %v", addr, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Client returns a cluster client, closed when the test ends.
func (c *Cluster) Client() *redis.ClusterClient {
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, DialTimeout: time.Second})
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

func (c *Cluster) stop() {
	for _, cmd := range c.cmds {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	c.cmds = nil
}
