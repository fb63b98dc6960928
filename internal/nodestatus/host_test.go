package nodestatus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseMemInfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]int64
		wantErr bool
	}{
		{
			name: "kB fields in bytes",
			in:   "MemTotal:       16314640 kB\nMemFree:         1234 kB\nSwapTotal:       2097148 kB\nHugePages_Total:       0\n",
			want: map[string]int64{"MemTotal": 16314640 * 1024, "MemFree": 1234 * 1024, "SwapTotal": 2097148 * 1024, "HugePages_Total": 0},
		},
		{name: "no MemTotal", in: "MemFree: 1 kB\n", wantErr: true},
		{name: "garbage", in: "MemTotal: lots kB\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMemInfo(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr {
				check(t, "meminfo", tc.want, got)
			}
		})
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.2 LTS\"\nID=ubuntu\n", want: "Ubuntu 24.04.2 LTS"},
		{in: "PRETTY_NAME='Alpine Linux v3.22'\n", want: "Alpine Linux v3.22"},
		{in: "PRETTY_NAME=Flatcar\n", want: "Flatcar"},
		{in: "NAME=Something\n", want: "Linux"},
	}
	for _, tc := range tests {
		if got := parseOSRelease(tc.in); got != tc.want {
			t.Errorf("parseOSRelease(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHostMachine(t *testing.T) {
	root := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("/proc/meminfo", "MemTotal: 4096 kB\nSwapTotal: 0 kB\n")
	write("/etc/machine-id", "abc123\n")
	write("/proc/sys/kernel/random/boot_id", "boot-xyz\n")
	write("/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\n")
	write("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "16\n")
	write("/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0\n")

	h := &HostMachine{
		RootDir: "/var/lib/nodelet", Root: root,
		Kernel: func() (string, error) { return "6.12.0", nil },
		FSCapacity: func(path string) (int64, error) {
			if path != "/var/lib/nodelet" {
				t.Errorf("statfs of %q, want the root dir", path)
			}
			return 50 << 30, nil
		},
	}
	info, err := h.MachineInfo()
	if err != nil {
		t.Fatalf("MachineInfo: %v", err)
	}
	if info.NumCPU < 1 {
		t.Errorf("NumCPU = %d", info.NumCPU)
	}
	info.NumCPU = 0
	want := MachineInfo{
		MemoryCapacity: 4096 * 1024, EphemeralStorageCapacity: 50 << 30,
		HugePages: []HugePages{{PageSize: 1 << 30, Pages: 0}, {PageSize: 2 << 20, Pages: 16}},
		MachineID: "abc123", BootID: "boot-xyz", KernelVersion: "6.12.0", OSImage: "Debian GNU/Linux 13 (trixie)",
	}
	check(t, "machine info", want, info)

	h.FSCapacity = func(string) (int64, error) { return 0, errors.New("no such dir") }
	if _, err := h.MachineInfo(); err == nil || !strings.Contains(err.Error(), "/var/lib/nodelet") {
		t.Errorf("MachineInfo with a bad root dir: err = %v, want one naming the dir", err)
	}
}
