package nodeshutdown

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
	"k8s.io/klog/v2"
)

// Logind is what the manager asks of systemd-logind (and of systemd, to reload it).
type Logind interface {
	// InhibitDelay is logind's InhibitDelayMaxUSec: the longest a delay inhibitor holds a
	// shutdown back.
	InhibitDelay() (time.Duration, error)
	// RaiseInhibitDelay writes the logind drop-in that sets InhibitDelayMaxSec to d and makes
	// logind read it again.
	RaiseInhibitDelay(d time.Duration) error
	// Inhibit takes a delay inhibitor on shutdown; closing the returned file releases it.
	Inhibit() (*os.File, error)
	// WatchShutdown sends PrepareForShutdown's argument: true when the shutdown starts, false
	// when it is cancelled. The channel closes when the connection ends.
	WatchShutdown() (<-chan bool, error)
	Close() error
}

const (
	logindService   = "org.freedesktop.login1"
	logindObject    = dbus.ObjectPath("/org/freedesktop/login1")
	logindInterface = "org.freedesktop.login1.Manager"
	// The drop-in upstream's kubelet writes: a node that moves from the kubelet to nodelet keeps
	// one file, not two that disagree.
	logindConfDir  = "/etc/systemd/logind.conf.d"
	logindConfFile = "99-kubelet.conf"
)

// systemBus is Logind over the system D-Bus, as upstream's nodeshutdown/systemd.
type systemBus struct {
	conn    *dbus.Conn
	confDir string
	closed  chan struct{} // ends WatchShutdown's forwarding
}

var _ Logind = (*systemBus)(nil)

// ConnectLogind connects to the system bus.
func ConnectLogind() (Logind, error) {
	conn, err := dbus.ConnectSystemBus()
	if err != nil {
		return nil, fmt.Errorf("connect to the system D-Bus: %w", err)
	}
	return &systemBus{conn: conn, confDir: logindConfDir, closed: make(chan struct{})}, nil
}

func (b *systemBus) InhibitDelay() (time.Duration, error) {
	v, err := b.conn.Object(logindService, logindObject).GetProperty(logindInterface + ".InhibitDelayMaxUSec")
	if err != nil {
		return 0, fmt.Errorf("read logind's InhibitDelayMaxUSec: %w", err)
	}
	usec, ok := v.Value().(uint64)
	if !ok {
		return 0, fmt.Errorf("logind's InhibitDelayMaxUSec is a %T, not a uint64", v.Value())
	}
	return time.Duration(usec) * time.Microsecond, nil
}

func (b *systemBus) RaiseInhibitDelay(d time.Duration) error {
	if err := os.MkdirAll(b.confDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", b.confDir, err)
	}
	path := filepath.Join(b.confDir, logindConfFile)
	conf := fmt.Sprintf("# Kubelet logind override (written by nodelet: its shutdown grace periods)\n[Login]\nInhibitDelayMaxSec=%.0f\n", d.Seconds())
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return fmt.Errorf("write the logind drop-in %s: %w", path, err)
	}
	// logind reads its configuration again on SIGHUP, sent through systemd as upstream does.
	call := b.conn.Object("org.freedesktop.systemd1", "/org/freedesktop/systemd1").
		Call("org.freedesktop.systemd1.Manager.KillUnit", 0, "systemd-logind.service", "all", int32(syscall.SIGHUP))
	if call.Err != nil {
		return fmt.Errorf("make logind read %s (SIGHUP through systemd): %w", path, call.Err)
	}
	return nil
}

func (b *systemBus) Inhibit() (*os.File, error) {
	var fd dbus.UnixFD
	err := b.conn.Object(logindService, logindObject).
		Call(logindInterface+".Inhibit", 0, "shutdown", "nodelet", "nodelet needs time to terminate the pods (graceful node shutdown)", "delay").
		Store(&fd)
	if err != nil {
		return nil, fmt.Errorf("take logind's shutdown delay inhibitor: %w", err)
	}
	return os.NewFile(uintptr(fd), "logind-inhibitor"), nil
}

func (b *systemBus) WatchShutdown() (<-chan bool, error) {
	if err := b.conn.AddMatchSignal(dbus.WithMatchInterface(logindInterface), dbus.WithMatchMember("PrepareForShutdown"),
		dbus.WithMatchObjectPath(logindObject)); err != nil {
		return nil, fmt.Errorf("watch logind's PrepareForShutdown: %w", err)
	}
	signals := make(chan *dbus.Signal, 4)
	b.conn.Signal(signals)
	out := make(chan bool, 1)
	go func() {
		defer close(out)
		for s := range signals {
			if s == nil || s.Name != logindInterface+".PrepareForShutdown" || len(s.Body) == 0 {
				continue
			}
			active, ok := s.Body[0].(bool)
			if !ok {
				klog.ErrorS(nil, "logind's PrepareForShutdown carried no boolean; ignored", "body", s.Body)
				continue
			}
			select {
			case out <- active:
			case <-b.closed:
				return
			}
		}
	}()
	return out, nil
}

func (b *systemBus) Close() error {
	close(b.closed)
	return b.conn.Close()
}
