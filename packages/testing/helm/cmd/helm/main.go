// Command helm is the upstream helm v4 CLI, built from the pinned helm.sh/helm/v4 module. This is the
// body of helm's own cmd/helm/helm.go (a main package cannot be imported), nothing more.
package main

import (
	"errors"
	"log/slog"
	"os"

	// Client auth plugins (exec, OIDC), as upstream imports them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	helmcmd "helm.sh/helm/v4/pkg/cmd"
	"helm.sh/helm/v4/pkg/kube"
)

func main() {
	// The field manager name helm records in managedFields, as upstream sets it.
	kube.ManagedFieldsManager = "helm"

	cmd, err := helmcmd.NewRootCmd(os.Stdout, os.Args[1:], helmcmd.SetupLogging)
	if err != nil {
		slog.Warn("command failed", slog.Any("error", err))
		os.Exit(1)
	}
	if err := cmd.Execute(); err != nil {
		var cerr helmcmd.CommandError
		if errors.As(err, &cerr) {
			os.Exit(cerr.ExitCode)
		}
		os.Exit(1)
	}
}
