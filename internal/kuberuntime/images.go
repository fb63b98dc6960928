package kuberuntime

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/credentials"
)

// ensureImage makes the container's image present per its pull policy and returns the image's
// status. Failures carry upstream's waiting reasons: ErrImageNeverPull, ErrImagePull, and
// ImagePullBackOff while the pull back-off for this pod and image runs. The pull uses the
// credentials of the pod's imagePullSecrets that match the image (see pullImage).
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
	if missing, err := m.pullImage(ctx, pod, spec, sandboxCfg); err != nil {
		failed := m.deps.Clock.Now()
		m.pullBackOff.Next(key, failed)
		m.setPullFailedAt(key, failed)
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "Failed", "%s", msg)
		if len(missing) > 0 {
			m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
				"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(missing, ", "))
		}
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

// pullImage pulls the image as upstream's kuberuntime PullImage: anonymously when no credential
// of the pod's pull secrets matches it, otherwise with each matching credential in turn (most
// specific registry first) until one succeeds; the error then lists every attempt's failure.
// missing names the pull secrets that could not be read.
func (m *Manager) pullImage(ctx context.Context, pod *v1.Pod, spec *runtimeapi.ImageSpec, sandboxCfg *runtimeapi.PodSandboxConfig) (missing []string, err error) {
	auths, missing, err := m.pullCredentials(pod, spec.Image)
	if err != nil {
		return missing, err
	}
	// Then the credential provider plugins' (upstream's default keyring after the secrets').
	var pluginErrs []error
	if m.deps.CredentialPlugins != nil {
		var found []credentials.AuthConfig
		found, pluginErrs = m.deps.CredentialPlugins.Lookup(ctx, spec.Image)
		auths = append(auths, found...)
	}
	withPluginErrs := func(err error) error {
		if err == nil || len(pluginErrs) == 0 {
			return err
		}
		return utilerrors.NewAggregate(append([]error{err}, pluginErrs...))
	}
	if len(auths) == 0 {
		_, err := m.deps.Images.PullImage(ctx, spec, nil, sandboxCfg)
		return missing, withPluginErrs(err)
	}
	var errs []error
	for _, a := range auths {
		auth := &runtimeapi.AuthConfig{Username: a.Username, Password: a.Password, Auth: a.Auth,
			ServerAddress: a.ServerAddress, IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken}
		_, err := m.deps.Images.PullImage(ctx, spec, auth, sandboxCfg)
		if err == nil {
			return missing, nil
		}
		errs = append(errs, err)
	}
	return missing, withPluginErrs(utilerrors.NewAggregate(errs))
}

// CredentialPlugins gives the credentials of the image credential provider plugins
// (credentialplugin.Plugins) and the errors of those that failed.
type CredentialPlugins interface {
	Lookup(ctx context.Context, image string) ([]credentials.AuthConfig, []error)
}

// pullCredentials returns the credentials of the pod's imagePullSecrets for image, as upstream's
// getPullSecretsForPod and MakeDockerKeyring. A secret that cannot be read is logged and left
// out (missing), as upstream; without Deps.Objects (standalone mode) there are none.
func (m *Manager) pullCredentials(pod *v1.Pod, image string) (auths []credentials.AuthConfig, missing []string, err error) {
	if m.deps.Objects == nil || len(pod.Spec.ImagePullSecrets) == 0 {
		return nil, nil, nil
	}
	var secrets []*v1.Secret
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue // API validation lets empty names through; upstream ignores them
		}
		s, err := m.deps.Objects.GetSecret(pod.Namespace, ref.Name)
		if err != nil {
			klog.InfoS("Unable to retrieve pull secret, the image pull may not succeed; check that the secret exists in the pod's namespace",
				"pod", klog.KObj(pod), "podUID", pod.UID, "secret", klog.KRef(pod.Namespace, ref.Name), "err", err)
			missing = append(missing, ref.Name)
			continue
		}
		secrets = append(secrets, s)
	}
	keyring, err := credentials.KeyringFromSecrets(secrets)
	if err != nil {
		return nil, missing, fmt.Errorf("pod %s: %w", klog.KObj(pod), err)
	}
	auths, err = keyring.Lookup(image)
	return auths, missing, err
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
