//go:build !linux

// Package parentdeath is a no-op outside Linux: the harness's own cleanup still stops the processes.
package parentdeath
