package kuberuntime

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/checkpoint"
)

// maxReplays bounds the Next calls that rebuild a restored back-off: 10 s doubles to the
// 300 s ceiling in six.
const maxReplays = 16

// recordBackOff notes the crash back-off of key after a Next, for the checkpoint:
// flowcontrol.Backoff does not list its entries.
func (m *Manager) recordBackOff(uid types.UID, key string) {
	m.backOffMu.Lock()
	defer m.backOffMu.Unlock()
	m.backOffs[key] = backOffRecord{uid: uid, delay: m.crashBackOff.Get(key)}
}

// backOffRecord is a crash back-off's pod and current delay.
type backOffRecord struct {
	uid   types.UID
	delay time.Duration
}

// BackOffs returns the crash back-offs by pod (checkpoint.BackOffs).
func (m *Manager) BackOffs() map[types.UID][]checkpoint.BackOff {
	m.backOffMu.Lock()
	defer m.backOffMu.Unlock()
	out := map[types.UID][]checkpoint.BackOff{}
	for key, r := range m.backOffs {
		out[r.uid] = append(out[r.uid], checkpoint.BackOff{Key: key, Delay: metav1.Duration{Duration: r.delay}})
	}
	return out
}

// RestoreBackOffs takes the crash back-offs a checkpoint kept, before the first sync: each
// container's back-off continues from its kept delay, so that a crash-looping container is
// not restarted at once because nodelet restarted. (The delay runs, as always, from the
// container's last exit, which the runtime keeps.)
func (m *Manager) RestoreBackOffs(pods []checkpoint.Pod) {
	now := m.deps.Clock.Now()
	for _, p := range pods {
		for _, b := range p.BackOffs {
			for i := 0; i < maxReplays && m.crashBackOff.Get(b.Key) < b.Delay.Duration; i++ {
				m.crashBackOff.Next(b.Key, now)
			}
			m.recordBackOff(p.UID, b.Key)
		}
	}
}

// forgetBackOffs drops the records of back-offs flowcontrol has forgotten (its GC).
func (m *Manager) forgetBackOffs() {
	m.backOffMu.Lock()
	defer m.backOffMu.Unlock()
	for key := range m.backOffs {
		if m.crashBackOff.Get(key) == 0 {
			delete(m.backOffs, key)
		}
	}
}
