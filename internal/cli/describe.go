package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
)

// describe runs `nodelet describe pod NAME [-n NAMESPACE]` (also pods NAME, pod/NAME): the pod
// from GET /pods and its events from GET /events, in `kubectl describe pod`'s layout
// (k8s.io/kubectl/pkg/describe describePod, ported field for field for what a node holds).
func (c *command) describe(ctx context.Context, args []string) int {
	var server, namespace string
	fs := newFlagSet("describe", &server)
	fs.StringVarP(&namespace, "namespace", "n", "default", "namespace of the pod")
	if code, done := c.parse(fs, args); done {
		return code
	}
	rest := fs.Args()
	var names []string
	switch {
	case len(rest) == 0:
		return c.usageError("you must specify the type of resource to describe: pods")
	case strings.HasPrefix(rest[0], "pod/") || strings.HasPrefix(rest[0], "pods/"):
		for _, r := range rest {
			kind, name, _ := strings.Cut(r, "/")
			if kind != "pod" && kind != "pods" || name == "" {
				return c.usageError("cannot describe %q: only pods (pod/NAME)", r)
			}
			names = append(names, name)
		}
	case rest[0] == "pod" || rest[0] == "pods" || rest[0] == "po":
		names = rest[1:]
	default:
		return c.fail("the server doesn't have a resource type %q", rest[0])
	}
	pods, err := c.listPods(ctx, server)
	if err != nil {
		return c.report(err)
	}
	var shown []*v1.Pod
	for i := range pods {
		if pods[i].Namespace == namespace && (len(names) == 0 || slices.Contains(names, pods[i].Name)) {
			shown = append(shown, &pods[i])
		}
	}
	slices.SortFunc(shown, func(a, b *v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	code := exitOK
	for _, name := range names {
		if !slices.ContainsFunc(shown, func(p *v1.Pod) bool { return p.Name == name }) {
			fmt.Fprintln(c.errOut, notFound(name).Error())
			code = exitError
		}
	}
	if len(names) == 0 && len(shown) == 0 {
		fmt.Fprintf(c.errOut, "No resources found in %s namespace.\n", namespace)
		return exitOK
	}
	for i, p := range shown {
		events, err := c.listEvents(ctx, server, url.Values{"namespace": {p.Namespace}, "pod": {p.Name}})
		if err != nil {
			return c.report(err)
		}
		// Only this instance's events (a recreated static pod has a new UID).
		events = slices.DeleteFunc(events, func(e v1.Event) bool { return e.InvolvedObject.UID != "" && e.InvolvedObject.UID != p.UID })
		if i > 0 {
			fmt.Fprint(c.out, "\n\n") // kubectl's separator between objects
		}
		fmt.Fprint(c.out, describePod(p, events, c.clock.Now()))
	}
	return code
}

// prefixWriter is kubectl's PrefixWriter: two spaces of indent per level, into a tabwriter
// with kubectl describe's settings (tabbedString).
type prefixWriter struct{ w io.Writer }

func (p prefixWriter) write(level int, format string, a ...any) {
	fmt.Fprintf(p.w, strings.Repeat("  ", level)+format, a...)
}

// describePod is kubectl's describePod.
func describePod(pod *v1.Pod, events []v1.Event, now time.Time) string {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	w := prefixWriter{tw}
	w.write(0, "Name:\t%s\n", pod.Name)
	w.write(0, "Namespace:\t%s\n", pod.Namespace)
	if pod.Spec.Priority != nil {
		w.write(0, "Priority:\t%d\n", *pod.Spec.Priority)
	}
	if pod.Spec.PriorityClassName != "" {
		w.write(0, "Priority Class Name:\t%s\n", pod.Spec.PriorityClassName)
	}
	if pod.Spec.RuntimeClassName != nil && *pod.Spec.RuntimeClassName != "" {
		w.write(0, "Runtime Class Name:\t%s\n", *pod.Spec.RuntimeClassName)
	}
	if pod.Spec.ServiceAccountName != "" {
		w.write(0, "Service Account:\t%s\n", pod.Spec.ServiceAccountName)
	}
	if pod.Spec.NodeName == "" {
		w.write(0, "Node:\t<none>\n")
	} else {
		w.write(0, "Node:\t%s\n", pod.Spec.NodeName+"/"+pod.Status.HostIP)
	}
	if pod.Status.StartTime != nil {
		w.write(0, "Start Time:\t%s\n", pod.Status.StartTime.Time.Format(time.RFC1123Z))
	}
	printMap(w, "Labels", pod.Labels)
	printAnnotations(w, pod.Annotations)
	if pod.DeletionTimestamp != nil && pod.Status.Phase != v1.PodFailed && pod.Status.Phase != v1.PodSucceeded {
		w.write(0, "Status:\tTerminating (lasts %s)\n", translateTimestampSince(pod.DeletionTimestamp.Time, now))
		if pod.DeletionGracePeriodSeconds != nil {
			w.write(0, "Termination Grace Period:\t%ds\n", *pod.DeletionGracePeriodSeconds)
		}
	} else {
		w.write(0, "Status:\t%s\n", pod.Status.Phase)
	}
	if pod.Status.Reason != "" {
		w.write(0, "Reason:\t%s\n", pod.Status.Reason)
	}
	if pod.Status.Message != "" {
		w.write(0, "Message:\t%s\n", pod.Status.Message)
	}
	if sc := pod.Spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		w.write(0, "SeccompProfile:\t%s\n", sc.SeccompProfile.Type)
		if sc.SeccompProfile.Type == v1.SeccompProfileTypeLocalhost && sc.SeccompProfile.LocalhostProfile != nil {
			w.write(0, "LocalhostProfile:\t%s\n", *sc.SeccompProfile.LocalhostProfile)
		}
	}
	w.write(0, "IP:\t%s\n", pod.Status.PodIP)
	if len(pod.Status.PodIPs) == 0 {
		w.write(0, "IPs:\t<none>\n")
	} else {
		w.write(0, "IPs:\n")
		for _, ip := range pod.Status.PodIPs {
			w.write(1, "IP:\t%s\n", ip.IP)
		}
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			w.write(0, "Controlled By:\t%s/%s\n", ref.Kind, ref.Name)
		}
	}
	if pod.Status.NominatedNodeName != "" {
		w.write(0, "NominatedNodeName:\t%s\n", pod.Status.NominatedNodeName)
	}
	if pod.Spec.Resources != nil {
		w.write(0, "Resources:\n")
		describeResources(w, pod.Spec.Resources, 1)
	}
	if len(pod.Spec.InitContainers) > 0 {
		describeContainers(w, pod, "Init Containers", pod.Spec.InitContainers, pod.Status.InitContainerStatuses)
	}
	describeContainers(w, pod, "Containers", pod.Spec.Containers, pod.Status.ContainerStatuses)
	if len(pod.Spec.EphemeralContainers) > 0 {
		var ec []v1.Container
		for i := range pod.Spec.EphemeralContainers {
			ec = append(ec, v1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
		}
		describeContainers(w, pod, "Ephemeral Containers", ec, pod.Status.EphemeralContainerStatuses)
	}
	if len(pod.Spec.ReadinessGates) > 0 {
		w.write(0, "Readiness Gates:\n  Type\tStatus\n")
		for _, g := range pod.Spec.ReadinessGates {
			status := "<none>"
			for _, c := range pod.Status.Conditions {
				if c.Type == g.ConditionType {
					status = string(c.Status)
					break
				}
			}
			w.write(1, "%v \t%v \n", g.ConditionType, status)
		}
	}
	if len(pod.Status.Conditions) > 0 {
		w.write(0, "Conditions:\n  Type\tStatus\n")
		for _, c := range pod.Status.Conditions {
			w.write(1, "%v \t%v \n", c.Type, c.Status)
		}
	}
	describeVolumes(w, pod.Spec.Volumes)
	qos := string(pod.Status.QOSClass)
	if qos == "" {
		qos = "<none>"
	}
	w.write(0, "QoS Class:\t%s\n", qos)
	printMap(w, "Node-Selectors", pod.Spec.NodeSelector)
	printTolerations(w, pod.Spec.Tolerations)
	describeEvents(w, tw, events, now)
	_ = tw.Flush()
	return buf.String()
}

// printMap is kubectl's printLabelsMultiline: "Title:\tk=v" then one key a line.
func printMap(w prefixWriter, title string, m map[string]string) {
	w.write(0, "%s:\t", title)
	if len(m) == 0 {
		w.write(0, "<none>\n")
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			w.write(0, "\t")
		}
		w.write(0, "%s=%s\n", k, m[k])
	}
}

// maxAnnotationLen is kubectl's: longer annotations print on their own lines, cut.
const maxAnnotationLen = 140

// printAnnotations is kubectl's printAnnotationsMultiline (last-applied-configuration skipped).
func printAnnotations(w prefixWriter, annotations map[string]string) {
	w.write(0, "Annotations:\t")
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if k != v1.LastAppliedConfigAnnotation {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		w.write(0, "<none>\n")
		return
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			w.write(0, "\t")
		}
		value := strings.TrimSuffix(annotations[k], "\n")
		if len(value)+len(k)+2 > maxAnnotationLen || strings.Contains(value, "\n") {
			w.write(0, "%s:\n", k)
			for _, s := range strings.Split(value, "\n") {
				if len(s) > maxAnnotationLen-2 {
					s = s[:maxAnnotationLen-2] + "..."
				}
				w.write(0, "\t  %s\n", s)
			}
		} else {
			w.write(0, "%s: %s\n", k, value)
		}
	}
}

// printTolerations is kubectl's printPodTolerationsMultiline.
func printTolerations(w prefixWriter, tolerations []v1.Toleration) {
	w.write(0, "Tolerations:\t")
	if len(tolerations) == 0 {
		w.write(0, "<none>\n")
		return
	}
	sorted := slices.Clone(tolerations)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	for i, t := range sorted {
		if i > 0 {
			w.write(0, "\t")
		}
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		if t.Effect != "" {
			s += ":" + string(t.Effect)
		}
		if t.Operator == v1.TolerationOpExists && t.Value == "" {
			if t.Key != "" || t.Effect != "" {
				s += " op=Exists"
			} else {
				s += "op=Exists"
			}
		}
		if t.TolerationSeconds != nil {
			s += fmt.Sprintf(" for %ds", *t.TolerationSeconds)
		}
		w.write(0, "%s\n", s)
	}
}

// describeVolumes is kubectl's describeVolumes for the volume types a node runs.
func describeVolumes(w prefixWriter, volumes []v1.Volume) {
	if len(volumes) == 0 {
		w.write(0, "Volumes:\t<none>\n")
		return
	}
	w.write(0, "Volumes:\n")
	for _, v := range volumes {
		w.write(1, "%v:\n", v.Name)
		switch s := v.VolumeSource; {
		case s.HostPath != nil:
			t := "<none>"
			if s.HostPath.Type != nil {
				t = string(*s.HostPath.Type)
			}
			w.write(2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", s.HostPath.Path, t)
		case s.EmptyDir != nil:
			limit := "<unset>"
			if s.EmptyDir.SizeLimit != nil && s.EmptyDir.SizeLimit.Sign() > 0 {
				limit = s.EmptyDir.SizeLimit.String()
			}
			w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%v\n    SizeLimit:\t%v\n", s.EmptyDir.Medium, limit)
		case s.Secret != nil:
			w.write(2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%v\n    Optional:\t%v\n", s.Secret.SecretName, s.Secret.Optional != nil && *s.Secret.Optional)
		case s.ConfigMap != nil:
			w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%v\n    Optional:\t%v\n", s.ConfigMap.Name, s.ConfigMap.Optional != nil && *s.ConfigMap.Optional)
		case s.Projected != nil:
			w.write(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
			for _, p := range s.Projected.Sources {
				switch {
				case p.Secret != nil:
					w.write(2, "SecretName:\t%v\n    Optional:\t%v\n", p.Secret.Name, p.Secret.Optional != nil && *p.Secret.Optional)
				case p.DownwardAPI != nil:
					w.write(2, "DownwardAPI:\ttrue\n")
				case p.ConfigMap != nil:
					w.write(2, "ConfigMapName:\t%v\n    Optional:\t%v\n", p.ConfigMap.Name, p.ConfigMap.Optional != nil && *p.ConfigMap.Optional)
				case p.ServiceAccountToken != nil && p.ServiceAccountToken.ExpirationSeconds != nil:
					w.write(2, "TokenExpirationSeconds:\t%d\n", *p.ServiceAccountToken.ExpirationSeconds)
				}
			}
		case s.DownwardAPI != nil:
			w.write(2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n")
			for _, m := range s.DownwardAPI.Items {
				if m.FieldRef != nil {
					w.write(3, "%v -> %v\n", m.FieldRef.FieldPath, m.Path)
				}
				if m.ResourceFieldRef != nil {
					w.write(3, "%v -> %v\n", m.ResourceFieldRef.Resource, m.Path)
				}
			}
		case s.PersistentVolumeClaim != nil:
			w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%v\n    ReadOnly:\t%v\n", s.PersistentVolumeClaim.ClaimName, s.PersistentVolumeClaim.ReadOnly)
		case s.Image != nil:
			w.write(2, "Type:\tImage (a container image or OCI artifact)\n    Reference:\t%v\n    PullPolicy:\t%v\n", s.Image.Reference, s.Image.PullPolicy)
		default:
			w.write(1, "<unknown>\n")
		}
	}
}

// describeEvents is kubectl's DescribeEvents: Type, Reason, Age (with "(xN over D)"), From,
// Message, by lastTimestamp.
func describeEvents(w prefixWriter, tw *tabwriter.Writer, events []v1.Event, now time.Time) {
	if len(events) == 0 {
		w.write(0, "Events:\t<none>\n")
		return
	}
	_ = tw.Flush() // the events table aligns on its own (kubectl's w.Flush)
	sorted := slices.Clone(events)
	slices.SortStableFunc(sorted, func(a, b v1.Event) int { return a.LastTimestamp.Time.Compare(b.LastTimestamp.Time) })
	w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.write(1, "----\t------\t----\t----\t-------\n")
	for i := range sorted {
		e := &sorted[i]
		row := eventRow(e, now) // LAST SEEN (xN over D), TYPE, REASON, OBJECT, MESSAGE
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		message := strings.TrimSpace(e.Message)
		if e.InvolvedObject.FieldPath != "" {
			message = e.InvolvedObject.FieldPath + ": " + message
		}
		w.write(1, "%v\t%v\t%s\t%v\t%v\n", e.Type, e.Reason, row[0], source, message)
	}
}
