package logrotation

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigIsValid(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	want := Config{MaxSize: 10 << 20, MaxFiles: 5, MonitorInterval: 10 * time.Second, MaxWorkers: 1}
	if cfg != want {
		t.Errorf("DefaultConfig() = %+v, want upstream's %+v", cfg, want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr []string // each must appear in the error; none means valid
	}{
		{"defaults", func(*Config) {}, nil},
		{"negative size disables rotation", func(c *Config) { c.MaxSize = -1 }, nil},
		{"two files", func(c *Config) { c.MaxFiles = 2 }, nil},
		{"one file", func(c *Config) { c.MaxFiles = 1 }, []string{"containerLogMaxFiles", "got 1"}},
		{"interval 3s", func(c *Config) { c.MonitorInterval = 3 * time.Second }, nil},
		{"interval below 3s", func(c *Config) { c.MonitorInterval = time.Second }, []string{"containerLogMonitorInterval", "got 1s"}},
		{"no workers", func(c *Config) { c.MaxWorkers = 0 }, []string{"containerLogMaxWorkers", "got 0"}},
		{"zero config names every field", func(c *Config) { *c = Config{} },
			[]string{"containerLogMaxFiles", "containerLogMonitorInterval", "containerLogMaxWorkers"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mutate(&cfg)
			err := cfg.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming %q", tc.wantErr)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Validate() = %q, want it to contain %q", err, s)
				}
			}
		})
	}
}

func TestNew(t *testing.T) {
	if _, err := New(DefaultConfig(), Deps{}); err == nil || !strings.Contains(err.Error(), "Runtime") {
		t.Errorf("New without a runtime = %v, want an error naming Runtime", err)
	}
	if _, err := New(Config{}, Deps{Runtime: newFakeRuntime()}); err == nil || !strings.Contains(err.Error(), "containerLogMaxFiles") {
		t.Errorf("New with an invalid config = %v, want the validation error", err)
	}
	m, err := New(DefaultConfig(), Deps{Runtime: newFakeRuntime()})
	if err != nil || m.clock == nil {
		t.Errorf("New without a clock = %v, %v; want the real clock", m, err)
	}
}

func TestParseMaxSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"10Mi", 10 << 20, false},
		{"100", 100, false},
		{"1G", 1e9, false},
		{"-1", -1, false},
		{"1.5", 0, true},
		{"ten", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseMaxSize(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseMaxSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "containerLogMaxSize") {
			t.Errorf("ParseMaxSize(%q) error %q does not name containerLogMaxSize", tc.in, err)
		}
	}
}
