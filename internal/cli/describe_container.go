package cli

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The containers of `nodelet describe pod` (kubectl's describeContainers and its helpers).

// describeContainers is kubectl's describeContainers.
func describeContainers(w prefixWriter, pod *v1.Pod, label string, containers []v1.Container, statuses []v1.ContainerStatus) {
	byName := map[string]v1.ContainerStatus{}
	for _, s := range statuses {
		byName[s.Name] = s
	}
	none := ""
	if len(containers) == 0 {
		none = " <none>"
	}
	w.write(0, "%s:%s\n", label, none)
	for i := range containers {
		c := &containers[i]
		st, ok := byName[c.Name]
		w.write(1, "%v:\n", c.Name)
		if ok {
			w.write(2, "Container ID:\t%s\n", st.ContainerID)
		}
		w.write(2, "Image:\t%s\n", c.Image)
		if ok {
			w.write(2, "Image ID:\t%s\n", st.ImageID)
		}
		ports, hostPorts := containerPorts(c.Ports)
		if strings.Contains(ports, ",") {
			w.write(2, "Ports:\t%s\n", ports)
		} else {
			w.write(2, "Port:\t%s\n", orNone(ports))
		}
		if strings.Contains(hostPorts, ",") {
			w.write(2, "Host Ports:\t%s\n", hostPorts)
		} else {
			w.write(2, "Host Port:\t%s\n", orNone(hostPorts))
		}
		if sc := c.SecurityContext; sc != nil && sc.SeccompProfile != nil {
			w.write(2, "SeccompProfile:\t%s\n", sc.SeccompProfile.Type)
			if sc.SeccompProfile.Type == v1.SeccompProfileTypeLocalhost && sc.SeccompProfile.LocalhostProfile != nil {
				w.write(3, "LocalhostProfile:\t%s\n", *sc.SeccompProfile.LocalhostProfile)
			}
		}
		for _, part := range []struct {
			title string
			lines []string
		}{{"Command", c.Command}, {"Args", c.Args}} {
			if len(part.lines) > 0 {
				w.write(2, "%s:\n", part.title)
				for _, l := range part.lines {
					for _, s := range strings.Split(l, "\n") {
						w.write(3, "%s\n", s)
					}
				}
			}
		}
		if ok {
			describeState(w, "State", st.State)
			if st.LastTerminationState.Terminated != nil {
				describeState(w, "Last State", st.LastTerminationState)
			}
			w.write(2, "Ready:\t%v\n", printBool(st.Ready))
			w.write(2, "Restart Count:\t%d\n", st.RestartCount)
		}
		describeResources(w, &c.Resources, 2)
		for _, p := range []struct {
			title string
			probe *v1.Probe
		}{{"Liveness", c.LivenessProbe}, {"Readiness", c.ReadinessProbe}, {"Startup", c.StartupProbe}} {
			if p.probe != nil {
				w.write(2, "%s:\t%s\n", p.title, describeProbe(p.probe))
			}
		}
		if len(c.EnvFrom) > 0 {
			w.write(2, "Environment Variables from:\n")
			for _, e := range c.EnvFrom {
				from, name, optional := "", "", false
				if e.ConfigMapRef != nil {
					from, name, optional = "ConfigMap", e.ConfigMapRef.Name, e.ConfigMapRef.Optional != nil && *e.ConfigMapRef.Optional
				} else if e.SecretRef != nil {
					from, name, optional = "Secret", e.SecretRef.Name, e.SecretRef.Optional != nil && *e.SecretRef.Optional
				}
				if e.Prefix == "" {
					w.write(3, "%s\t%s\tOptional: %t\n", name, from, optional)
				} else {
					w.write(3, "%s\t%s with prefix '%s'\tOptional: %t\n", name, from, e.Prefix, optional)
				}
			}
		}
		describeEnv(w, pod, c)
		none := ""
		if len(c.VolumeMounts) == 0 {
			none = "\t<none>"
		}
		w.write(2, "Mounts:%s\n", none)
		mounts := slices.Clone(c.VolumeMounts)
		sort.SliceStable(mounts, func(i, j int) bool { return mounts[i].MountPath < mounts[j].MountPath })
		for _, m := range mounts {
			flags := []string{"rw"}
			if m.ReadOnly {
				flags = []string{"ro"}
			}
			if m.SubPath != "" {
				flags = append(flags, fmt.Sprintf("path=%q", m.SubPath))
			}
			w.write(3, "%s from %s (%s)\n", m.MountPath, m.Name, strings.Join(flags, ","))
		}
	}
}

func containerPorts(ports []v1.ContainerPort) (container, host string) {
	var cs, hs []string
	for _, p := range ports {
		c, h := fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol), fmt.Sprintf("%d/%s", p.HostPort, p.Protocol)
		if p.Name != "" {
			c, h = fmt.Sprintf("%s (%s)", c, p.Name), fmt.Sprintf("%s (%s)", h, p.Name)
		}
		cs, hs = append(cs, c), append(hs, h)
	}
	return strings.Join(cs, ", "), strings.Join(hs, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func printBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// describeState is kubectl's describeStatus.
func describeState(w prefixWriter, name string, s v1.ContainerState) {
	switch {
	case s.Running != nil:
		w.write(2, "%s:\tRunning\n", name)
		w.write(3, "Started:\t%v\n", s.Running.StartedAt.Time.Format(time.RFC1123Z))
	case s.Waiting != nil:
		w.write(2, "%s:\tWaiting\n", name)
		if s.Waiting.Reason != "" {
			w.write(3, "Reason:\t%s\n", s.Waiting.Reason)
		}
	case s.Terminated != nil:
		t := s.Terminated
		w.write(2, "%s:\tTerminated\n", name)
		if t.Reason != "" {
			w.write(3, "Reason:\t%s\n", t.Reason)
		}
		if t.Message != "" {
			w.write(3, "Message:\t%s\n", t.Message)
		}
		w.write(3, "Exit Code:\t%d\n", t.ExitCode)
		if t.Signal > 0 {
			w.write(3, "Signal:\t%d\n", t.Signal)
		}
		w.write(3, "Started:\t%s\n", t.StartedAt.Time.Format(time.RFC1123Z))
		w.write(3, "Finished:\t%s\n", t.FinishedAt.Time.Format(time.RFC1123Z))
	default:
		w.write(2, "%s:\tWaiting\n", name)
	}
}

// describeResources is kubectl's: limits then requests, each sorted by name.
func describeResources(w prefixWriter, r *v1.ResourceRequirements, level int) {
	for _, part := range []struct {
		title string
		list  v1.ResourceList
	}{{"Limits", r.Limits}, {"Requests", r.Requests}} {
		if len(part.list) == 0 {
			continue
		}
		w.write(level, "%s:\n", part.title)
		names := make([]string, 0, len(part.list))
		for n := range part.list {
			names = append(names, string(n))
		}
		sort.Strings(names)
		for _, n := range names {
			q := part.list[v1.ResourceName(n)]
			w.write(level+1, "%s:\t%s\n", n, q.String())
		}
	}
}

// describeProbe is kubectl's DescribeProbe.
func describeProbe(p *v1.Probe) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds successThreshold=%d failureThreshold=%d", p.InitialDelaySeconds, p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold)
	switch {
	case p.Exec != nil:
		return fmt.Sprintf("exec %v %s", p.Exec.Command, attrs)
	case p.HTTPGet != nil:
		u := &url.URL{Scheme: strings.ToLower(string(p.HTTPGet.Scheme)), Path: p.HTTPGet.Path}
		if port := p.HTTPGet.Port.String(); port != "" {
			u.Host = net.JoinHostPort(p.HTTPGet.Host, port)
		} else {
			u.Host = p.HTTPGet.Host
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p.TCPSocket != nil:
		return fmt.Sprintf("tcp-socket %s:%s %s", p.TCPSocket.Host, p.TCPSocket.Port.String(), attrs)
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return fmt.Sprintf("grpc <pod>:%d %s %s", p.GRPC.Port, service, attrs)
	}
	return "unknown " + attrs
}

// describeEnv is kubectl's describeContainerEnvVars; fieldRef values are resolved from the pod
// as kubectl's EnvValueRetriever does for the fields a node knows.
func describeEnv(w prefixWriter, pod *v1.Pod, c *v1.Container) {
	none := ""
	if len(c.Env) == 0 {
		none = "\t<none>"
	}
	w.write(2, "Environment:%s\n", none)
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			for i, s := range strings.Split(e.Value, "\n") {
				if i == 0 {
					w.write(3, "%s:\t%s\n", e.Name, s)
				} else {
					w.write(3, "\t%s\n", s)
				}
			}
			continue
		}
		switch f := e.ValueFrom; {
		case f.FieldRef != nil:
			w.write(3, "%s:\t%s (%s:%s)\n", e.Name, fieldValue(pod, f.FieldRef.FieldPath), f.FieldRef.APIVersion, f.FieldRef.FieldPath)
		case f.ResourceFieldRef != nil:
			w.write(3, "%s:\t%s (%s)\n", e.Name, resourceValue(c, f.ResourceFieldRef), f.ResourceFieldRef.Resource)
		case f.SecretKeyRef != nil:
			optional := f.SecretKeyRef.Optional != nil && *f.SecretKeyRef.Optional
			w.write(3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", e.Name, f.SecretKeyRef.Key, f.SecretKeyRef.Name, optional)
		case f.ConfigMapKeyRef != nil:
			optional := f.ConfigMapKeyRef.Optional != nil && *f.ConfigMapKeyRef.Optional
			w.write(3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", e.Name, f.ConfigMapKeyRef.Key, f.ConfigMapKeyRef.Name, optional)
		}
	}
}

func fieldValue(pod *v1.Pod, path string) string {
	switch path {
	case "metadata.name":
		return pod.Name
	case "metadata.namespace":
		return pod.Namespace
	case "metadata.uid":
		return string(pod.UID)
	case "spec.nodeName":
		return pod.Spec.NodeName
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName
	case "status.hostIP":
		return pod.Status.HostIP
	case "status.podIP":
		return pod.Status.PodIP
	}
	return ""
}

// resourceValue is the container's value of a limits.* or requests.* resource in its divisor's
// units, "node allocatable" for a limit the container does not set (kubectl's words).
func resourceValue(c *v1.Container, ref *v1.ResourceFieldSelector) string {
	kind, name, _ := strings.Cut(ref.Resource, ".")
	list := c.Resources.Requests
	if kind == "limits" {
		list = c.Resources.Limits
	}
	q, ok := list[v1.ResourceName(name)]
	if !ok {
		if kind == "limits" && (name == "cpu" || name == "memory") {
			return "node allocatable"
		}
		return "0"
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == "cpu" {
		return fmt.Sprint((q.MilliValue() + divisor.MilliValue() - 1) / divisor.MilliValue())
	}
	return fmt.Sprint((q.Value() + divisor.Value() - 1) / divisor.Value())
}
