// Command nodelet is a Kubernetes node agent compatible with the upstream kubelet. It takes the
// kubelet's flags and KubeletConfiguration file; this file only parses them and wires the agent.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/pflag"
	"google.golang.org/grpc/experimental"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/agent"
	"github.com/nodelet/nodelet/internal/cli"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/kubeletconfig"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// defaultGCPercent is the garbage collector's target (GOGC) when the environment sets none. An
// agent runs on every node, where its memory is taken from the pods: at 50 the heap grows to 1.5×
// what is live instead of 2×, for a little more of the collector's CPU time (make bench,
// docs/benchmarks.md). GOGC and GOMEMLIMIT in the environment work as in any Go program.
const defaultGCPercent = 50

func main() {
	setGCPercent(os.LookupEnv)
	// Before any gRPC connection: the pool for CRI messages without gRPC's 1 MiB tier (why:
	// cri.NewBufferPool).
	experimental.SetDefaultBufferPool(cri.NewBufferPool())
	os.Exit(run(os.Args[1:]))
}

// setGCPercent sets defaultGCPercent unless GOGC is set in the environment, and returns the
// percent in effect.
func setGCPercent(lookupEnv func(string) (string, bool)) int {
	if _, set := lookupEnv("GOGC"); set {
		p := debug.SetGCPercent(-1) // read it back: the runtime parsed GOGC at start
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}

func run(args []string) int {
	if cli.IsCommand(args) { // nodelet get pods, nodelet logs ...: talk to the local API
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return cli.Run(ctx, args, os.Stdin, os.Stdout, os.Stderr, clock.RealClock{}, agent.Version)
	}
	loader := kubeletconfig.NewFlagSet("nodelet")
	cfg, err := loader.Load(args, nil)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Printf("nodelet: a Kubernetes node agent that takes the kubelet's flags and config file.\n\nUsage: nodelet [flags]\n\nCommands (talking to a running nodelet):\n%s\nFlags:\n%s", cli.Usage, loader.FlagSet().FlagUsages())
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodelet: %v\n", err)
		return 2
	}
	defer klog.Flush()
	acfg, err := agent.ConfigFrom(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodelet: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	klog.InfoS("Starting nodelet", "node", acfg.NodeName, "rootDir", acfg.RootDir, "runtime", acfg.RuntimeEndpoint)
	err = agent.Run(ctx, acfg, agent.Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}})
	if err != nil {
		klog.ErrorS(err, "nodelet failed")
		return 1
	}
	klog.InfoS("nodelet stopped")
	return 0
}
