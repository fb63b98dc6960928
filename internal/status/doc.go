// Package status turns the runtime's view of a pod (container.PodStatus) into the API
// v1.PodStatus that nodelet reports, computed as the upstream kubelet v1.37 computes it with its
// default feature gates. It is pure: no I/O, no clock, no logging; everything it needs, including
// the time, comes in an Input, and Generate never modifies its Input.
//
// Generate folds together what upstream spreads over several places:
//
//   - kubelet_pods.go convertStatusToAPIStatus / convertToAPIContainerStatuses: container
//     statuses (state, lastTerminationState from the previous instance, restart count, image,
//     imageID, containerID, volume mounts, resources), pod IPs ordered by the node's IP family,
//     QoS class;
//   - kubelet_pods.go getPhase and generateAPIPodStatus: the phase (init containers, sidecars,
//     container restart policies and rules, terminal phases kept), the phase reason and message,
//     the active deadline (DeadlineExceeded), host IPs, and pod IPs of host-network pods;
//   - prober manager UpdatePodStatus: the started and ready fields from probe results;
//   - status/generate.go: the PodReadyToStartContainers, Initialized, ContainersReady and Ready
//     conditions, plus PodScheduled;
//   - status manager updateStatusInternal and normalizeStatus: lastTransitionTime kept while a
//     condition's status is unchanged, startTime kept once set, observedGeneration, timestamps
//     truncated to seconds and termination messages capped.
//
// QOSClass is upstream's GetPodQOS, which the runtime also uses to pick cgroup parents.
package status
