package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// joinSubPath returns the host path of subPath inside the volume at volumePath, as upstream's
// makeMounts: an absolute subPath or one with a ".." component is rejected; a missing subPath
// is created as directories with the volume root's mode (upstream's SafeMakeDir); symlinks on
// the way are resolved inside the volume and one that leads out of it is rejected. The
// returned path has its symlinks resolved, so the runtime does not resolve them again.
//
// Upstream additionally bind-mounts the checked path through /proc/self/fd into
// <pod>/volume-subpaths so that nothing can swap a component for a symlink between the check
// and the runtime's mount. nodelet does not (yet): a process that can write the volume while a
// container of the pod is being created could race that window.
func joinSubPath(volumePath, subPath string) (string, error) {
	if filepath.IsAbs(subPath) {
		return "", fmt.Errorf("subPath %q must not be an absolute path", subPath)
	}
	if slices.Contains(strings.Split(filepath.ToSlash(subPath), "/"), "..") {
		return "", fmt.Errorf("subPath %q must not contain '..'", subPath)
	}
	rel := filepath.Clean(subPath)
	if rel == "." {
		return volumePath, nil
	}
	root, err := os.OpenRoot(volumePath)
	if err != nil {
		return "", fmt.Errorf("subPath %q: opening the volume: %w", subPath, err)
	}
	defer root.Close()
	if _, err := root.Stat(rel); errors.Is(err, fs.ErrNotExist) {
		if err := mkdirAllIn(root, volumePath, rel); err != nil {
			return "", fmt.Errorf("subPath %q: creating it in the volume: %w", subPath, err)
		}
	}
	if _, err := root.Stat(rel); err != nil { // fails when a symlink leads out of the volume
		return "", fmt.Errorf("subPath %q: %w", subPath, err)
	}
	realVolume, err := filepath.EvalSymlinks(volumePath)
	if err != nil {
		return "", fmt.Errorf("subPath %q: %w", subPath, err)
	}
	resolved, err := filepath.EvalSymlinks(filepath.Join(volumePath, rel))
	if err != nil {
		return "", fmt.Errorf("subPath %q: %w", subPath, err)
	}
	if resolved != realVolume && !strings.HasPrefix(resolved, strings.TrimSuffix(realVolume, "/")+"/") {
		return "", fmt.Errorf("subPath %q resolves to %s, outside the volume", subPath, resolved)
	}
	return resolved, nil
}

// mkdirAllIn creates the missing directories of rel inside root with the mode of the volume's
// root directory, whatever the umask.
func mkdirAllIn(root *os.Root, volumePath, rel string) error {
	fi, err := os.Stat(volumePath)
	if err != nil {
		return err
	}
	perm := fi.Mode() & (os.ModePerm | os.ModeSetgid | os.ModeSticky)
	cur := ""
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		_, err := root.Stat(cur)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := root.Mkdir(cur, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := root.Chmod(cur, perm); err != nil {
			return err
		}
	}
	return nil
}

// expandSubPathExpr is upstream's ExpandContainerVolumeMounts: $(VAR) references are replaced
// from the container's environment, and a reference to an unknown or empty variable is an
// error naming it.
func expandSubPathExpr(expr string, env func(string) (string, bool)) (string, error) {
	missing := map[string]bool{}
	out := expand(expr, func(k string) string {
		v, ok := env(k)
		if !ok || v == "" {
			missing[k] = true
		}
		return v
	})
	if len(missing) > 0 {
		keys := make([]string, 0, len(missing))
		for k := range missing {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", fmt.Errorf("missing value for %s", strings.Join(keys, ", "))
	}
	return out, nil
}

// expand is upstream's third_party/forked/golang/expansion.Expand: "$(VAR)" is replaced by
// mapping(VAR), "$$" is an escaped "$", and anything else (an unterminated "$(", a "$" before
// another character) is kept as written.
func expand(input string, mapping func(string) string) string {
	var b strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(input); cursor++ {
		if input[cursor] != '$' || cursor+1 >= len(input) {
			continue
		}
		b.WriteString(input[checkpoint:cursor])
		rest := input[cursor+1:]
		advance := 1
		switch rest[0] {
		case '$':
			b.WriteByte('$')
		case '(':
			if end := strings.IndexByte(rest, ')'); end > 0 {
				b.WriteString(mapping(rest[1:end]))
				advance = end + 1
			} else {
				b.WriteString("$(")
			}
		default:
			b.WriteByte('$')
			b.WriteByte(rest[0])
		}
		cursor += advance
		checkpoint = cursor + 1
	}
	return b.String() + input[checkpoint:]
}

func (m *Manager) subPathEnv(pod *v1.Pod, c *v1.Container, podIPs []string) (func(string) (string, bool), error) {
	if m.cfg.SubPathEnv != nil {
		return m.cfg.SubPathEnv(pod, c, podIPs)
	}
	return basicEnv(pod, c, podIPs), nil
}

// basicEnv resolves the part of a container's environment that needs nothing but the pod:
// literal values (with $(VAR) references to earlier variables) and the field references
// metadata.name, metadata.namespace, metadata.uid, spec.nodeName, spec.serviceAccountName,
// status.podIP and status.podIPs. Other sources are left undefined, so a subPathExpr that
// uses them fails with "missing value". Config.SubPathEnv replaces it with the full resolver.
func basicEnv(pod *v1.Pod, c *v1.Container, podIPs []string) func(string) (string, bool) {
	vals := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vals[e.Name] = expand(e.Value, func(k string) string {
				if v, ok := vals[k]; ok {
					return v
				}
				return "$(" + k + ")"
			})
		case e.ValueFrom.FieldRef != nil:
			if v, ok := basicFieldRef(pod, e.ValueFrom.FieldRef.FieldPath, podIPs); ok {
				vals[e.Name] = v
			}
		}
	}
	return func(k string) (string, bool) { v, ok := vals[k]; return v, ok }
}

func basicFieldRef(pod *v1.Pod, path string, podIPs []string) (string, bool) {
	switch path {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	case "spec.nodeName":
		return pod.Spec.NodeName, true
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, true
	case "status.podIP":
		if len(podIPs) > 0 {
			return podIPs[0], true
		}
		return "", true
	case "status.podIPs":
		return strings.Join(podIPs, ","), true
	}
	return "", false
}
