// Command etcd is the upstream etcd server at the version the pinned API server's client expects.
package main

import (
	_ "loopwright.dev/testing-tools/internal/parentdeath"

	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
