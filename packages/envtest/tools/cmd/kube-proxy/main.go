// Command kube-proxy is the upstream Service proxy, built from the pinned k8s.io/kubernetes module: pods of
// the test cluster reach the API server and each other through Service addresses.
package main

import (
	_ "loopwright.dev/testing-tools/internal/parentdeath"

	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewProxyCommand()))
}
