package kubeletconfig

import (
	"strings"
	"testing"
	"time"
)

func TestContainerGCFlags(t *testing.T) {
	if got, want := mustLoad(t).ContainerGC, (ContainerGC{MaxPerPodContainer: 1, MaxContainers: -1, Period: time.Minute}); got != want {
		t.Errorf("defaults = %+v, want upstream's %+v", got, want)
	}
	got := mustLoad(t, "--minimum-container-ttl-duration=30s", "--maximum-dead-containers-per-container=3",
		"--maximum-dead-containers=-5", "--container-gc-period=1s").ContainerGC
	if want := (ContainerGC{MinAge: 30 * time.Second, MaxPerPodContainer: 3, MaxContainers: -5, Period: time.Second}); got != want {
		t.Errorf("flags = %+v, want %+v", got, want)
	}
	if got := mustLoad(t, "--maximum-dead-containers-per-container=-1", "--maximum-dead-containers=0").ContainerGC; got.MaxPerPodContainer != -1 || got.MaxContainers != 0 {
		t.Errorf("no per-container limit, none dead on the node: %+v", got)
	}
	for _, tc := range []struct{ args, want string }{
		{"--minimum-container-ttl-duration=-1s", "--minimum-container-ttl-duration: must not be negative, got -1s"},
		{"--container-gc-period=0s", "--container-gc-period: must be greater than 0, got 0s"},
		{"--container-gc-period=-1m", "--container-gc-period: must be greater than 0, got -1m0s"},
		{"--maximum-dead-containers=many", `invalid argument "many" for "--maximum-dead-containers"`},
		{"--maximum-dead-containers-per-container=1.5", `invalid argument "1.5" for "--maximum-dead-containers-per-container"`},
	} {
		_, err := Load(strings.Fields(tc.args), fixedHostname("node"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.want)
		}
	}
}
