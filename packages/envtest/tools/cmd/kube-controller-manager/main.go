// Command kube-controller-manager is the upstream controller manager (garbage collector, namespace
// lifecycle, service-account tokens...), built from the pinned k8s.io/kubernetes module.
package main

import (
	_ "loopwright.dev/testing-tools/internal/parentdeath"

	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
