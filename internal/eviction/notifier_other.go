//go:build !linux

package eviction

import (
	"context"
	"errors"
)

func newMemcgNotifier(context.Context, Threshold, string, string, chan<- struct{}) (notifier, error) {
	return nil, errors.New("memory cgroup notifications need Linux")
}
