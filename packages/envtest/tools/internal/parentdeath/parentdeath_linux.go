// Package parentdeath ties a control-plane process to the test process that started it, so that no
// orphan etcd or kube-apiserver survives a test runner killed with SIGKILL (which runs no cleanup).
// Enabled by LOOPWRIGHT_EXIT_WITH_PARENT=1, which only the Loopwright harness sets.
package parentdeath

import (
	"os"
	"syscall"
)

func init() {
	if os.Getenv("LOOPWRIGHT_EXIT_WITH_PARENT") != "1" {
		return
	}
	// PR_SET_PDEATHSIG: the kernel sends SIGTERM (graceful shutdown) when the parent exits.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		os.Stderr.WriteString("parentdeath: prctl failed: " + errno.Error() + "\n")
		os.Exit(1)
	}
	// The parent may have died between fork and prctl; then we were re-parented already.
	if os.Getppid() == 1 {
		os.Exit(1)
	}
}
