package host

import (
	"reflect"
	"testing"
	"time"
)

func TestParseMemInfo(t *testing.T) {
	const in = `MemTotal:        8000000 kB
MemFree:         1000000 kB
MemAvailable:    5000000 kB
Buffers:          100000 kB
Inactive(file):  2000000 kB
AnonPages:       1500000 kB
SwapTotal:       2000000 kB
SwapFree:        1500000 kB
HugePages_Total:       0
`
	got, err := parseMemInfo([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := MemInfo{MemTotal: 8000000 * 1024, MemFree: 1000000 * 1024, MemAvailable: 5000000 * 1024,
		SwapTotal: 2000000 * 1024, SwapFree: 1500000 * 1024, InactiveFile: 2000000 * 1024, AnonPages: 1500000 * 1024}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{"MemFree: 1 kB\n", "MemTotal: x kB\n", "MemTotal:\n"} {
		if _, err := parseMemInfo([]byte(bad)); err == nil {
			t.Errorf("parseMemInfo(%q): want an error", bad)
		}
	}
}

const netDev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1145655599  801048    0    0    0     0          0         0 1145655599  801048    0    0    0     0       0          0
  eth0: 424259780   27815    3    0    0     0          0         0  2255759   21391    4    0    0     0       0          0
vethab12: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0
  cni0:     100       1    0    0    0     0          0         0      200       2    0    0    0     0       0          0
`

func TestParseNetDev(t *testing.T) {
	got, err := parseNetDev([]byte(netDev))
	if err != nil {
		t.Fatal(err)
	}
	want := []Interface{
		{Name: "eth0", RxBytes: 424259780, RxErrors: 3, TxBytes: 2255759, TxErrors: 4},
		{Name: "cni0", RxBytes: 100, TxBytes: 200},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	bad := netDev[:len(netDev)-1] + " 7\n"
	if _, err := parseNetDev([]byte(bad)); err == nil {
		t.Error("want an error for a line with 17 counters")
	}
}

func TestParseSmallProcFiles(t *testing.T) {
	bt, err := parseBootTime([]byte("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"))
	if err != nil || !bt.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("parseBootTime = %v, %v", bt, err)
	}
	if _, err := parseBootTime([]byte("cpu 1 2\n")); err == nil {
		t.Error("parseBootTime: want an error without btime")
	}
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "1.36 3.49 4.53 2/3518 3715089\n", want: 3518},
		{in: "1.36 3.49 4.53 2-3518 3715089\n", wantErr: true},
		{in: "1.36 3.49\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseLoadAvgTasks([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseLoadAvgTasks(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func TestParseProcess(t *testing.T) {
	// Fields 10 (minflt), 12 (majflt), 14 (utime), 15 (stime); the name holds ") (".
	const stat = "4242 (no) (de) let) S 1 4242 4242 0 -1 4194560 5000 0 12 0 150 50 0 0 20 0 9 0 100 0 0\n"
	p, err := parseProcStat([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	want := Process{PageFaults: 5000, MajorPageFaults: 12, CPUUsageNanosecs: 200 * uint64(10*time.Millisecond)}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	if _, err := parseProcStat([]byte("1 (x) S 1 2\n")); err == nil {
		t.Error("want an error for a short stat")
	}
	rss, err := parseStatusRSS([]byte("Name:\tnodelet\nVmRSS:\t   51200 kB\nThreads: 9\n"))
	if err != nil || rss != 51200*1024 {
		t.Errorf("parseStatusRSS = %d, %v", rss, err)
	}
	if _, err := parseStatusRSS([]byte("Name:\tx\n")); err == nil {
		t.Error("want an error without VmRSS")
	}
}
