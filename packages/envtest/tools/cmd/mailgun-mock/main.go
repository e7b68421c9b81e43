// Command mailgun-mock serves Mailgun's own mock of its HTTP API on a loopback port: the real peer
// for mailgun-cluster's tests. It prints the base URL on stdout, then serves until stdin closes or
// it receives SIGTERM, so it never outlives the test process that started it.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mailgun/mailgun-go/v4"
)

func main() {
	server := mailgun.NewMockServer()
	defer server.Stop()
	fmt.Println(server.URL())

	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-done:
	case <-signals:
	}
}
