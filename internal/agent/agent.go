package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/podconfig"
)

// Config is what the agent needs to know, already resolved from flags and the config file.
type Config struct {
	NodeName string
	// StaticPodPath is a manifest directory or file; empty disables the file source.
	StaticPodPath      string
	FileCheckFrequency time.Duration
	// StaticPodURL is polled for a Pod or PodList; empty disables the HTTP source.
	StaticPodURL       string
	StaticPodURLHeader http.Header
	HTTPCheckFrequency time.Duration
}

// Consumer takes the merged PodUpdates. The sync loop is the real one.
type Consumer interface {
	Run(ctx context.Context, updates <-chan podconfig.PodUpdate)
}

// Deps are the agent's collaborators.
type Deps struct {
	Clock    clock.WithTicker
	Reporter podconfig.Reporter
	Consumer Consumer
}

func (c Config) validate() error {
	if c.NodeName == "" {
		return errors.New("agent: NodeName is required")
	}
	if c.StaticPodPath != "" && c.FileCheckFrequency <= 0 {
		return fmt.Errorf("agent: fileCheckFrequency must be positive, got %v", c.FileCheckFrequency)
	}
	if c.StaticPodURL != "" && c.HTTPCheckFrequency <= 0 {
		return fmt.Errorf("agent: httpCheckFrequency must be positive, got %v", c.HTTPCheckFrequency)
	}
	return nil
}

// Sources lists the pod sources the config enables, in the order they are started.
func (c Config) Sources() []string {
	var out []string
	if c.StaticPodPath != "" {
		out = append(out, podconfig.FileSource)
	}
	if c.StaticPodURL != "" {
		out = append(out, podconfig.HTTPSource)
	}
	return out
}

// Run starts the sources, the mux and the consumer, and blocks until ctx ends and all of them
// have stopped.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if deps.Clock == nil || deps.Reporter == nil || deps.Consumer == nil {
		return errors.New("agent: Clock, Reporter and Consumer are required")
	}
	mux := podconfig.NewMux(deps.Clock, deps.Reporter, 50)
	var wg sync.WaitGroup
	start := func(name string, run func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(); err != nil {
				klog.ErrorS(err, "Component stopped with an error", "component", name)
			}
		}()
	}
	if cfg.StaticPodPath != "" {
		klog.InfoS("Watching manifest path", "path", cfg.StaticPodPath, "period", cfg.FileCheckFrequency)
		start("file source", func() error {
			return podconfig.RunFileSource(ctx, podconfig.FileConfig{Path: cfg.StaticPodPath, NodeName: cfg.NodeName,
				Period: cfg.FileCheckFrequency, Clock: deps.Clock, Sink: mux, Reporter: deps.Reporter})
		})
	}
	if cfg.StaticPodURL != "" {
		klog.InfoS("Polling manifest URL", "url", cfg.StaticPodURL, "period", cfg.HTTPCheckFrequency)
		start("http source", func() error {
			return podconfig.RunHTTPSource(ctx, podconfig.HTTPConfig{URL: cfg.StaticPodURL, Header: cfg.StaticPodURLHeader,
				NodeName: cfg.NodeName, Period: cfg.HTTPCheckFrequency, Clock: deps.Clock, Sink: mux, Reporter: deps.Reporter})
		})
	}
	if len(cfg.Sources()) == 0 {
		klog.InfoS("No pod sources configured: set --pod-manifest-path or --manifest-url (staticPodPath, staticPodURL)")
	}
	start("consumer", func() error { deps.Consumer.Run(ctx, mux.Updates()); return nil })
	<-ctx.Done()
	wg.Wait()
	return nil
}
