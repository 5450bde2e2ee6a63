package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A test guard: only a failed test waits this long.
const serveLimitsGuard = 2 * time.Minute

// Slow clients cannot take the server: 200 connections that send a
// request's headers with Content-Length: 1000000 and then trickle its body,
// and 20 idle kept-alive connections, are all closed by the server, and a
// legitimate request sent behind them is answered. The limits are short
// here so that the test runs fast; what is asserted is what the server did,
// not how long it took.
func TestServeSlowClients(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limits := serveLimits{header: 300 * time.Millisecond, body: 300 * time.Millisecond,
		write: 300 * time.Millisecond, idle: 300 * time.Millisecond, conns: 16}
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{stdout: io.Discard, stderr: io.Discard, client: &http.Client{}}
	served := make(chan struct{})
	go func() {
		defer close(served)
		e.serveOn(ctx, ln, false, time.Second, limits)
	}()
	defer func() {
		cancel()
		<-served
	}()
	addr := ln.Addr().String()

	const slow, idle = 200, 20
	closed := make(chan string, slow+idle)
	var wg sync.WaitGroup
	stop := make(chan struct{}) // ends the trickles of a failed test
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for i := range slow {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		fmt.Fprintf(conn, "POST /api/check HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{", addr)
		wg.Add(2)
		go func() { // one byte of the body every 100 ms
			defer wg.Done()
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			defer conn.Close()
			conn.SetReadDeadline(time.Now().Add(serveLimitsGuard))
			_, err := io.Copy(io.Discard, conn)
			closed <- fmt.Sprintf("slow client %d: %v", i, err)
		}()
	}
	for i := range idle {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("idle client %d: %v", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(serveLimitsGuard))
			fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				closed <- fmt.Sprintf("idle client %d: no answer: %v", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			// Kept alive, and then idle: the server must close it.
			_, err = io.Copy(io.Discard, br)
			closed <- fmt.Sprintf("idle client %d: %v", i, err)
		}()
	}

	client := &http.Client{Timeout: serveLimitsGuard}
	resp, err := client.Post("http://"+addr+"/api/check", "application/json",
		strings.NewReader(`{"robots":"User-agent: *\nDisallow: /p\n","urls":["/p"],"agents":["Bot"]}`))
	if err != nil {
		t.Fatalf("the legitimate request behind %d slow and %d idle clients: %v", slow, idle, err)
	}
	var check checkResponse
	err = json.NewDecoder(resp.Body).Decode(&check)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(check.Results) != 1 || check.Results[0].Allowed {
		t.Errorf("the legitimate request: %d %+v (%v), want /p disallowed", resp.StatusCode, check, err)
	}

	for range slow + idle {
		// io.Copy returns nil at EOF: the server closed the connection.
		// A reset is the server closing it too; the guard's timeout is
		// not.
		msg := <-closed
		if strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "no answer") {
			t.Errorf("%s, want the connection closed by the server", msg)
		}
	}
}

// The limits bound clients, not the work they ask for: a fetch whose site
// answers after the body, write and idle limits have all passed is still
// answered in full.
func TestServeLongFetchNotCut(t *testing.T) {
	limits := serveLimits{header: 100 * time.Millisecond, body: 100 * time.Millisecond,
		write: 100 * time.Millisecond, idle: 100 * time.Millisecond, conns: 4}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * limits.body) // a slow site, not a slow client
		fmt.Fprint(w, "User-agent: *\nDisallow: /slow\n")
	}))
	defer site.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{stdout: io.Discard, stderr: io.Discard, client: &http.Client{}}
	served := make(chan struct{})
	go func() {
		defer close(served)
		e.serveOn(ctx, ln, false, serveLimitsGuard, limits)
	}()
	defer func() {
		cancel()
		<-served
	}()
	client := &http.Client{Timeout: serveLimitsGuard}
	resp, err := client.Post("http://"+ln.Addr().String()+"/api/fetch", "application/json", strings.NewReader(`{"url":"`+site.URL+`"}`))
	if err != nil {
		t.Fatalf("POST /api/fetch of a slow site: %v", err)
	}
	var got fetchResponse
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || got.State != "parsed" || !strings.Contains(got.Robots, "Disallow: /slow") {
		t.Errorf("POST /api/fetch of a slow site = %d %+v (%v), want its robots.txt", resp.StatusCode, got, err)
	}
}

// The help of serve states the limits it applies.
func TestServeLimitsDocumented(t *testing.T) {
	l := defaultServeLimits()
	help := serveCommand().help
	for _, want := range []string{
		fmt.Sprintf("%v to\nsend a request's headers", l.header),
		fmt.Sprintf("at most %d connections", l.conns),
		fmt.Sprintf("at most %d URLs, %d agents and %d\nchecks", maxURLs, maxAgents, maxChecks),
		fmt.Sprintf("after %v of checks", maxCheckWork),
	} {
		if !strings.Contains(help, want) {
			t.Errorf("serve's help lacks %q", want)
		}
	}
	if l.body != time.Minute || l.write != time.Minute || l.idle != time.Minute || !strings.Contains(help, "a minute to send its body and a minute to read\nan answer") {
		t.Errorf("serve's help does not state the body, write and idle limits %+v", l)
	}
}
