package host

import (
	"reflect"
	"testing"
)

func u64(v uint64) *uint64 { return &v }

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in      string
		want    *uint64
		wantErr bool
	}{
		{in: "max\n", want: nil},
		{in: "9223372036854771712\n", want: nil}, // v1 "unlimited"
		{in: "536870912\n", want: u64(536870912)},
		{in: "garbage", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseLimit([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("parseLimit(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseLimit(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseCPU(t *testing.T) {
	if v, err := parseUint([]byte("8779528225781\n")); err != nil || v != 8779528225781 {
		t.Errorf("parseUint(cpuacct.usage) = %d, %v", v, err)
	}
	tests := []struct {
		name    string
		in      string
		want    uint64
		wantErr bool
	}{
		{name: "v2 cpu.stat", in: "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 0\n", want: 1500000},
		{name: "no usage_usec", in: "user_usec 1000\n", wantErr: true},
		{name: "malformed", in: "usage_usec\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseCPUStatV2([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: parseCPUStatV2 = %d, %v; want %d (error %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

const memoryStatV1 = `cache 14307328
rss 6852608
pgfault 304225
pgmajfault 7
inactive_file 258048
total_cache 4266876928
total_rss 125227008
total_swap 4096
total_pgfault 325969781
total_pgmajfault 130522
total_inactive_file 1559347200
`

const memoryStatV2 = `anon 104857600
file 209715200
inactive_file 52428800
active_file 157286400
pgfault 1000
pgmajfault 3
`

func TestMemoryFromStat(t *testing.T) {
	v1, err := parseFlatKeyed([]byte(memoryStatV1))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := parseFlatKeyed([]byte(memoryStatV2))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  Memory
		want Memory
	}{
		{
			name: "v1 uses the hierarchical totals and the cgroup's own faults",
			got:  memoryV1(4392177664, v1),
			want: Memory{Usage: 4392177664, WorkingSet: 4392177664 - 1559347200, RSS: 125227008,
				PageFaults: 304225, MajorPageFaults: 7, Swap: u64(4096)},
		},
		{
			name: "v1 inactive file above usage floors the working set at 0",
			got:  memoryV1(1000, map[string]uint64{"total_inactive_file": 5000, "total_rss": 10}),
			want: Memory{Usage: 1000, WorkingSet: 0, RSS: 10},
		},
		{
			name: "v1 without hierarchy counters falls back to the cgroup's own",
			got:  memoryV1(1000, map[string]uint64{"inactive_file": 400, "rss": 300}),
			want: Memory{Usage: 1000, WorkingSet: 600, RSS: 300},
		},
		{
			name: "v2",
			got:  memoryV2(314572800, v2),
			want: Memory{Usage: 314572800, WorkingSet: 314572800 - 52428800, RSS: 104857600, PageFaults: 1000, MajorPageFaults: 3},
		},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, tt.got, tt.want)
		}
	}
}

func TestParseFlatKeyedErrors(t *testing.T) {
	for _, in := range []string{"a b c\n", "a x\n"} {
		if _, err := parseFlatKeyed([]byte(in)); err == nil {
			t.Errorf("parseFlatKeyed(%q): want an error", in)
		}
	}
}

func TestParsePressure(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    PSI
		wantErr bool
	}{
		{
			name: "some and full",
			in:   "some avg10=1.00 avg60=1.66 avg300=2.57 total=2272207360\nfull avg10=0.50 avg60=0.00 avg300=0.00 total=7\n",
			want: PSI{Some: PSIData{Avg10: 1, Avg60: 1.66, Avg300: 2.57, Total: 2272207360}, Full: PSIData{Avg10: 0.5, Total: 7}},
		},
		{name: "old kernel cpu without full", in: "some avg10=0.10 avg60=0.00 avg300=0.00 total=5\n", want: PSI{Some: PSIData{Avg10: 0.1, Total: 5}}},
		{name: "malformed", in: "some avg10\n", wantErr: true},
		{name: "bad number", in: "some total=x\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parsePressure([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v (error %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
