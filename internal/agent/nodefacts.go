package agent

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/admission"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
)

// nodeFacts is what the runtime manager and status generation need to know about the machine.
type nodeFacts struct {
	hostIPs        []string
	memoryCapacity int64
	allocatable    v1.ResourceList
	// kernel is the kernel's version (nil when unreadable): which sysctls it namespaces.
	kernel *version.Version
	// appArmorErr says why the host cannot enforce AppArmor profiles (nil when it can).
	appArmorErr error
	// maskedPaths are the host's paths masked in every container besides
	// criconfig.DefaultMaskedPaths.
	maskedPaths []string
}

func readNodeFacts(nodeIP string) (nodeFacts, error) {
	ips, err := hostIPs(nodeIP)
	if err != nil {
		return nodeFacts{}, err
	}
	mem, err := memTotal("/proc/meminfo")
	if err != nil {
		return nodeFacts{}, err
	}
	return nodeFacts{hostIPs: ips, memoryCapacity: mem, allocatable: v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
	}, kernel: kernelVersion("/proc/sys/kernel/osrelease"), appArmorErr: admission.AppArmorHostError("/sys/module"),
		maskedPaths: thermalThrottlePaths("/sys")}, nil
}

// thermalThrottlePaths are the host's per-CPU thermal_throttle directories under sysRoot,
// named as a container sees them (/sys/devices/system/cpu/cpu<N>/thermal_throttle): upstream
// masks those that exist besides its default masked paths.
func thermalThrottlePaths(sysRoot string) []string {
	found, _ := filepath.Glob(filepath.Join(sysRoot, "devices/system/cpu/cpu[0-9]*/thermal_throttle"))
	out := make([]string, 0, len(found))
	for _, p := range found {
		if rel, err := filepath.Rel(sysRoot, p); err == nil {
			out = append(out, filepath.Join("/sys", rel))
		}
	}
	return out
}

// kernelVersion reads the running kernel's version, as upstream's kernel.GetVersion; nil when
// it cannot (then only the sysctls every kernel namespaces are safe).
func kernelVersion(path string) *version.Version {
	b, err := os.ReadFile(path)
	if err != nil {
		klog.ErrorS(err, "Cannot read the kernel version; only the sysctls every kernel namespaces are safe", "path", path)
		return nil
	}
	v, err := version.ParseGeneric(strings.TrimSpace(string(b)))
	if err != nil {
		klog.ErrorS(err, "Cannot parse the kernel version; only the sysctls every kernel namespaces are safe", "path", path)
		return nil
	}
	return v
}

// hostIPs are --node-ip's addresses, or the first global unicast address of the machine
// (IPv4 preferred), as upstream picks a node address when none is given.
func hostIPs(nodeIP string) ([]string, error) {
	if nodeIP != "" {
		return strings.Split(nodeIP, ","), nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list host addresses: %w", err)
	}
	var v6 string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || !ipn.IP.IsGlobalUnicast() {
			continue
		}
		if ipn.IP.To4() != nil {
			return []string{ipn.IP.String()}, nil
		}
		if v6 == "" {
			v6 = ipn.IP.String()
		}
	}
	if v6 != "" {
		return []string{v6}, nil
	}
	return []string{"127.0.0.1"}, nil
}

func memTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read memory size: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s: %w", path, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in %s", path)
}

// subPathEnv resolves a container's environment for subPathExpr, as upstream does.
func subPathEnv(facts nodeFacts, objects criconfig.Objects, services kuberuntime.ServiceLister) func(pod *v1.Pod, c *v1.Container, podIPs []string) (func(string) (string, bool), error) {
	return func(pod *v1.Pod, c *v1.Container, podIPs []string) (func(string) (string, bool), error) {
		serviceEnv, err := kuberuntime.ServiceEnv(pod, services)
		if err != nil {
			return nil, err
		}
		env, err := criconfig.Env(pod, c, criconfig.PodIdentity{NodeName: pod.Spec.NodeName, PodIPs: podIPs,
			HostIPs: facts.hostIPs, Allocatable: facts.allocatable, Objects: objects, ServiceEnv: serviceEnv})
		if err != nil {
			return nil, err
		}
		return criconfig.EnvMap(env), nil
	}
}

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }
func goos() string                                { return runtime.GOOS }
func goarch() string                              { return runtime.GOARCH }
