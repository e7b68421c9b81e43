// Command pause is the pod sandbox's process: it holds the pod's namespaces open and does nothing until it
// is told to stop. Static and dependency-free, so the sandbox image is this one file. (Pods here do not
// share their PID namespace, so it has no orphans to reap.)
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
