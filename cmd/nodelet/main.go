// Command nodelet is a Kubernetes node agent compatible with the upstream kubelet. It takes the
// kubelet's flags and KubeletConfiguration file; this file only parses them and wires the agent.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/agent"
	"github.com/nodelet/nodelet/internal/kubeletconfig"
	"github.com/nodelet/nodelet/internal/podconfig"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	loader := kubeletconfig.NewFlagSet("nodelet")
	cfg, err := loader.Load(args, nil)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Printf("nodelet: a Kubernetes node agent that takes the kubelet's flags and config file.\n\nUsage: nodelet [flags]\n\nFlags:\n%s", loader.FlagSet().FlagUsages())
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodelet: %v\n", err)
		return 2
	}
	defer klog.Flush()
	kc := cfg.KubeletConfiguration
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	klog.InfoS("Starting nodelet", "node", cfg.NodeName, "rootDir", cfg.RootDir, "runtime", kc.ContainerRuntimeEndpoint)
	err = agent.Run(ctx, agent.Config{
		NodeName:           cfg.NodeName,
		StaticPodPath:      kc.StaticPodPath,
		FileCheckFrequency: kc.FileCheckFrequency.Duration,
		StaticPodURL:       kc.StaticPodURL,
		StaticPodURLHeader: http.Header(kc.StaticPodURLHeader),
		HTTPCheckFrequency: kc.HTTPCheckFrequency.Duration,
	}, agent.Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}, Consumer: agent.LogConsumer{}})
	if err != nil {
		klog.ErrorS(err, "nodelet failed")
		return 1
	}
	klog.InfoS("nodelet stopped")
	return 0
}
