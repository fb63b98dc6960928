package runtime

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ensureImage makes the container's image present per its pull policy and returns the image's
// status. Failures carry upstream's waiting reasons: ErrImageNeverPull, ErrImagePull, and
// ImagePullBackOff while the pull back-off for this pod and image runs.
func (m *Manager) ensureImage(ctx context.Context, pod *v1.Pod, c *v1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (*runtimeapi.Image, error) {
	spec := &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image}
	st, err := m.deps.Images.ImageStatus(ctx, spec, false)
	if err != nil {
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "InspectFailed", "Failed to inspect image %q: %v", c.Image, err)
		return nil, &ContainerError{Container: c.Name, Reason: "ImageInspectError", Message: fmt.Sprintf("Failed to inspect image %q: %v", c.Image, err), Err: err}
	}
	present := st.GetImage()
	pull := c.ImagePullPolicy == v1.PullAlways || (c.ImagePullPolicy != v1.PullNever && present == nil)
	if !pull {
		if present != nil {
			m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			return present, nil
		}
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, ReasonErrImageNeverPull, "%s", msg)
		return nil, &ContainerError{Container: c.Name, Reason: ReasonErrImageNeverPull, Message: msg}
	}
	key := string(pod.UID) + "/" + c.Image
	now := m.deps.Clock.Now()
	if m.pullBackOff.IsInBackOffSinceUpdate(key, now) {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "BackOff", "%s", msg)
		return nil, &ContainerError{Container: c.Name, Reason: ReasonImagePullBackOff, Message: msg, Until: m.pullFailedAt(key).Add(m.pullBackOff.Get(key))}
	}
	m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	waitStart := m.deps.Clock.Now()
	if m.cfg.SerializeImagePulls {
		m.pullMu.Lock()
		defer m.pullMu.Unlock()
	}
	pullStart := m.deps.Clock.Now()
	if _, err := m.deps.Images.PullImage(ctx, spec, nil, sandboxCfg); err != nil {
		failed := m.deps.Clock.Now()
		m.pullBackOff.Next(key, failed)
		m.setPullFailedAt(key, failed)
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "Failed", "%s", msg)
		return nil, &ContainerError{Container: c.Name, Reason: ReasonErrImagePull, Message: msg, Err: err}
	}
	m.pullBackOff.Reset(key)
	m.setPullFailedAt(key, time.Time{})
	st, err = m.deps.Images.ImageStatus(ctx, spec, false)
	if err != nil || st.GetImage() == nil {
		return nil, &ContainerError{Container: c.Name, Reason: ReasonErrImagePull, Message: fmt.Sprintf("image %q not present after a successful pull: %v", c.Image, err), Err: err}
	}
	end := m.deps.Clock.Now()
	m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "Pulled", "Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
		c.Image, end.Sub(pullStart).Round(time.Millisecond), end.Sub(waitStart).Round(time.Millisecond), st.GetImage().GetSize())
	return st.GetImage(), nil
}

// pullFailedAt is when the last pull of key failed: the pull back-off runs from then (the
// flowcontrol.Backoff keeps that time but does not expose it).
func (m *Manager) pullFailedAt(key string) time.Time {
	m.pullFailMu.Lock()
	defer m.pullFailMu.Unlock()
	return m.pullFailed[key]
}

func (m *Manager) setPullFailedAt(key string, t time.Time) {
	m.pullFailMu.Lock()
	defer m.pullFailMu.Unlock()
	if t.IsZero() {
		delete(m.pullFailed, key)
		return
	}
	m.pullFailed[key] = t
}
