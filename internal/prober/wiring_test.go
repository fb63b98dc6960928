package prober

import (
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/events"
	"github.com/nodelet/nodelet/internal/statusmanager"
)

// The collaborators nodelet wires in satisfy the prober's interfaces.
var (
	_ Execer       = (*cri.Client)(nil)
	_ Recorder     = (*events.Store)(nil)
	_ StatusGetter = (*statusmanager.Manager)(nil)
)
