package main

import "testing"

func TestParseStatTicks(t *testing.T) {
	// pid (comm with ") spaces") state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	stat := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 25 0 0 20 0 12 0\n"
	got, err := parseStatTicks(stat)
	if err != nil || got != 175 {
		t.Fatalf("parseStatTicks = %d, %v; want 175", got, err)
	}
	if _, err := parseStatTicks("4242 (x) S 1 2"); err == nil {
		t.Error("parseStatTicks accepted a truncated line")
	}
}

func TestParseStatusKiB(t *testing.T) {
	status := "Name:\tnodelet\nVmHWM:\t   40960 kB\nVmRSS:\t   30720 kB\n"
	if v, err := parseStatusKiB(status, "VmHWM"); err != nil || v != 40960 {
		t.Errorf("VmHWM = %d, %v", v, err)
	}
	if v, err := parseStatusKiB(status, "VmRSS"); err != nil || v != 30720 {
		t.Errorf("VmRSS = %d, %v", v, err)
	}
	if _, err := parseStatusKiB(status, "VmSwap"); err == nil {
		t.Error("a missing key gave no error")
	}
}

func TestIsAgentCmdline(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/tmp/nodelet-bin-1/nodelet\x00--config\x00c.yaml\x00":       true,
		"bin/nodelet\x00--pod-manifest-path\x00examples/\x00":        true,
		"go\x00build\x00-o\x00/tmp/x/nodelet\x00./cmd/nodelet\x00":   false,
		"/usr/bin/bash\x00-c\x00nodelet --help\x00":                  false,
		"/tmp/go-build1/b001/e2e.test\x00-test.v=true\x00":           true,
		"/tmp/go-build1/b001/server.test\x00-test.v=true\x00":        false,
		"/var/cache/nodelet/k8s-1/kubelet\x00--config\x00k.yaml\x00": true,
		"/var/cache/nodelet/k8s-1/kube-apiserver\x00--v=2\x00":       false,
		"": false,
	} {
		if got := isAgentCmdline([]byte(cmd)); got != want {
			t.Errorf("isAgentCmdline(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestProcessFlag(t *testing.T) {
	p := process{pid: 7, args: []string{"/tmp/b/nodelet", "--config", "c.yaml", "--hostname-override", "e2e-1",
		"--container-runtime-endpoint=unix:///var/lib/nodelet-testenv//containerd.sock"}}
	if v, ok := p.flag("hostname-override"); !ok || v != "e2e-1" {
		t.Errorf("flag(hostname-override) = %q, %v", v, ok)
	}
	e, ok := p.flag("container-runtime-endpoint")
	if !ok || !sameSocket(e, "/var/lib/nodelet-testenv/containerd.sock") {
		t.Errorf("flag(container-runtime-endpoint) = %q, %v; want the test environment's socket", e, ok)
	}
	if sameSocket(e, "unix:///tmp/x/missing.sock") {
		t.Error("sameSocket matched two different sockets")
	}
	if _, ok := p.flag("root-dir"); ok {
		t.Error("flag found an absent flag")
	}
	if got := p.short(); got != "pid 7, node e2e-1" {
		t.Errorf("short() = %q", got)
	}
}

// BenchmarkOtherAgents is the cost of one guard scan of /proc.
func BenchmarkOtherAgents(b *testing.B) {
	for b.Loop() {
		if _, err := otherAgents("/nonexistent.sock"); err != nil {
			b.Fatal(err)
		}
	}
}
