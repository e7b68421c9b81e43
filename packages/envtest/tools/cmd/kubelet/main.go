// Command kubelet is the upstream node agent, built from the pinned k8s.io/kubernetes module: it makes the
// test cluster's node real (pods run in containers through containerd's CRI).
package main

import (
	_ "loopwright.dev/testing-tools/internal/parentdeath"

	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
