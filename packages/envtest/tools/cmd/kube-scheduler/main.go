// Command kube-scheduler is the upstream scheduler, built from the pinned k8s.io/kubernetes module: pods of
// the test cluster are bound to its node as in any cluster.
package main

import (
	_ "loopwright.dev/testing-tools/internal/parentdeath"

	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
