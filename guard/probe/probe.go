// Package probe is a set of hostile HTTP clients for the tests of colline's doors (package guard
// and its users): each runs against a live server's address over real TCP and reports what the
// server did with it, so that a test can assert that no client holds a door.
package probe

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Result is what a server did with one hostile client.
type Result struct {
	Held   time.Duration // how long the server kept the connection (until it answered or closed it)
	Status int           // the status it answered; 0 when it closed the connection without one
	Sent   int           // bytes the client had sent by then
}

func (r Result) String() string {
	return fmt.Sprintf("held %.1fs, answered %d after %d bytes", r.Held.Seconds(), r.Status, r.Sent)
}

// Drip opens a connection to addr and sends head whole, then drip one byte every interval, until
// the server answers or closes the connection, or give up passes (Result.Held is then give up).
// With an incomplete request line or headers in head it is a client dripping its headers; with
// whole headers (a Content-Length) it is one dripping its body.
func Drip(addr, head, drip string, every, giveUp time.Duration) Result {
	start := time.Now()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return Result{}
	}
	defer conn.Close()
	answered := make(chan int, 1)
	go func() {
		conn.SetReadDeadline(start.Add(giveUp))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	sent := 0
	if n, err := conn.Write([]byte(head)); err == nil {
		sent += n
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for k := 0; ; k++ {
		select {
		case code := <-answered:
			return Result{Held: time.Since(start), Status: code, Sent: sent}
		case <-tick.C:
			if k < len(drip) {
				if n, err := conn.Write([]byte{drip[k]}); err == nil {
					sent += n
				}
			}
		}
	}
}

// DripHeaders is Drip of a GET of path whose headers never end: one more header byte every interval.
func DripHeaders(addr, path string, every, giveUp time.Duration) Result {
	return Drip(addr, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n", strings.Repeat("X-Drip: a\r\n", 10_000), every, giveUp)
}

// DripBody is Drip of a request (method, path, headers "K: V\r\n" each) announcing a body of n
// bytes and sending it one byte every interval.
func DripBody(addr, method, path, headers string, n int, every, giveUp time.Duration) Result {
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n", method, path, addr, headers, n)
	return Drip(addr, head, strings.Repeat(" ", n), every, giveUp)
}

// Send sends raw (a whole request) on a fresh connection and returns the status answered (0 when
// the server closed the connection without an answer) and the time it took.
func Send(addr, raw string, giveUp time.Duration) (int, time.Duration) {
	start := time.Now()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, time.Since(start)
	}
	defer conn.Close()
	conn.SetDeadline(start.Add(giveUp))
	if _, err := conn.Write([]byte(raw)); err != nil {
		return 0, time.Since(start)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, time.Since(start)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// Idle opens n connections to addr that send nothing, and returns a function closing them.
func Idle(addr string, n int) func() {
	var conns []net.Conn
	for range n {
		if c, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
			conns = append(conns, c)
		}
	}
	return func() {
		for _, c := range conns {
			c.Close()
		}
	}
}
