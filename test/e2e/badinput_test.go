package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBadManifestDirectory runs the nodelet binary on a manifest directory holding two valid
// pods beside every kind of bad file. The valid pods come through; each bad file is reported
// with its path and reason once, across several re-reads; the process keeps running and exits
// cleanly on SIGTERM.
func TestBadManifestDirectory(t *testing.T) {
	bin := buildNodelet(t)
	dir := filepath.Join(worldReadableTempDir(t), "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	valid := "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec: {containers: [{name: c, image: busybox:1.35}]}\n"
	put("good-a.yaml", strings.ReplaceAll(valid, "%s", "good-a"))
	put("good-b.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"good-b"},"spec":{"containers":[{"name":"c","image":"busybox:1.35"}]}}`)
	bad := map[string]string{ // file → a part of the reason the log must give
		"malformed.yaml":    "not valid YAML or JSON",
		"wrong-types.json":  "cannot unmarshal string",
		"unknown-field.yml": `unknown field \"spec.containers[0].imagee\"`,
		"invalid-spec.yaml": "spec.containers[0].ports[0].containerPort: Invalid value: 70000",
		"zz-duplicate.yaml": "already defined in", // files are read in name order; the first wins
		"empty.yaml":        "empty manifest",
		"huge.yaml":         "larger than the 10485760 bytes",
		"garbage.bin":       "not valid YAML or JSON",
		"loop.yaml":         "too many levels of symbolic links",
		"unreadable.yaml":   "permission denied",
		// Security fields (issue 14): each names the field at fault.
		"bad-sysctl.yaml":   `spec.securityContext.sysctls[0].name: Invalid value: \"kernel.shm$max\"`,
		"bad-seccomp.yaml":  `spec.containers[0].securityContext.seccompProfile.type: Unsupported value: \"Strict\"`,
		"bad-apparmor.yaml": "spec.securityContext.appArmorProfile.localhostProfile: Required value",
	}
	put("malformed.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: m\n")
	put("wrong-types.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},"spec":{"containers":"busybox"}}`)
	put("unknown-field.yml", "apiVersion: v1\nkind: Pod\nmetadata: {name: u}\nspec: {containers: [{name: c, imagee: busybox}]}\n")
	put("invalid-spec.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: i}\nspec: {containers: [{name: c, image: busybox, ports: [{containerPort: 70000}]}]}\n")
	put("bad-sysctl.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bs}\nspec: {securityContext: {sysctls: [{name: \"kernel.shm$max\", value: \"1\"}]}, containers: [{name: c, image: busybox}]}\n")
	put("bad-seccomp.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bc}\nspec: {containers: [{name: c, image: busybox, securityContext: {seccompProfile: {type: Strict}}}]}\n")
	put("bad-apparmor.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: ba}\nspec: {securityContext: {appArmorProfile: {type: Localhost}}, containers: [{name: c, image: busybox}]}\n")
	put("zz-duplicate.yaml", strings.ReplaceAll(valid, "%s", "good-a"))
	put("empty.yaml", "")
	put("garbage.bin", "\x00\xff\xfe\x01binary\x00garbage\xc3\x28")
	huge, err := os.Create(filepath.Join(dir, "huge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(50 << 20); err != nil { // a 50 MB file
		t.Fatal(err)
	}
	huge.Close()
	if err := os.Symlink("loop2.yaml", filepath.Join(dir, "loop.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop.yaml", filepath.Join(dir, ".loop2.yaml")); err != nil { // hidden: ignored itself
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".loop2.yaml"), filepath.Join(dir, "loop2.yaml")); err != nil {
		t.Fatal(err)
	}
	bad["loop2.yaml"] = "too many levels of symbolic links"
	put("unreadable.yaml", strings.ReplaceAll(valid, "%s", "secret"))
	if err := os.Chmod(filepath.Join(dir, "unreadable.yaml"), 0); err != nil {
		t.Fatal(err)
	}

	// No container runtime is needed to read manifests: the endpoint does not exist, and nodelet
	// keeps retrying it while the sources run.
	base := filepath.Dir(dir)
	for _, d := range []string{"root", "pods"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			if err := os.Chown(filepath.Join(base, d), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := filepath.Join(base, "config.yaml")
	if err := os.WriteFile(cfg, []byte(kubeletConfig(filepath.Join(base, "pods"))), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg, "--pod-manifest-path", dir, "--file-check-frequency", "1s",
		"--hostname-override", "e2e-node", "--root-dir", filepath.Join(base, "root"), "--read-only-port", "0",
		"--container-runtime-endpoint", "unix://"+filepath.Join(base, "no-runtime.sock"), "-v", "4")
	if os.Geteuid() == 0 {
		// root reads any file: run as nobody so that the unreadable file is unreadable.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := watchLogs(stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()

	// The mux logs each update it delivers towards the sync loop.
	logs.waitCount(t, 15*time.Second, 1, `"Pod update"`, `op="ADD"`, `pods=["default/good-a-e2e-node","default/good-b-e2e-node"]`)
	reads := len(logs.matching(`"Manifest path read"`))
	logs.waitCount(t, 15*time.Second, reads+3, `"Manifest path read"`) // three more periodic re-reads

	select {
	case err := <-exited:
		t.Fatalf("nodelet exited on bad input: %v\n%s", err, logs.dump())
	default:
	}
	for file, reason := range bad {
		path := filepath.Join(dir, file)
		got := logs.matching("Pod manifest rejected", `origin="`+path+`"`)
		if len(got) != 1 {
			t.Errorf("%s reported %d times, want once:\n%s", file, len(got), strings.Join(got, "\n"))
			continue
		}
		if !strings.Contains(got[0], reason) {
			t.Errorf("%s: report %q does not give the reason %q", file, got[0], reason)
		}
		// And a node event (`nodelet events -A` shows it), once.
		if ev := logs.matching(`"Node event"`, `reason="ManifestRejected"`, path); len(ev) != 1 {
			t.Errorf("%s: %d ManifestRejected node events, want one:\n%s", file, len(ev), strings.Join(ev, "\n"))
		}
	}
	if got := logs.matching(`"Pod update"`); len(got) != 1 || strings.Contains(got[0], "secret") {
		t.Errorf("want exactly one update with the two valid pods, got:\n%s", strings.Join(got, "\n"))
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("nodelet exited with %v after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nodelet did not stop within 10 s of SIGTERM")
	}
}
