// Package admission decides whether the node may run a new pod, as upstream's kubelet does in
// its predicate admit handler (pkg/kubelet/lifecycle/predicate.go) with the scheduler's
// general predicates: Admit checks the pod's OS, its SupplementalGroupsPolicy, that its
// requests (k8s.io/component-helpers/resource.PodRequests: init, sidecar and pod-level
// resources, overhead) fit in the node's allocatable next to the active pods already
// admitted (cpu, memory, ephemeral-storage, extended resources and the pods count), its
// required node affinity and nodeSelector (component-helpers nodeaffinity), its nodeName,
// its host ports, and, except for static pods, the node's NoExecute taints
// (component-helpers FindMatchingUntoleratedTaint). Reasons and messages are upstream's
// ("OutOfcpu", "Node didn't have enough resource: cpu, requested: ...", "NodeAffinity",
// "Predicate NodeAffinity failed: ..."), so `kubectl describe pod` reads the same.
// RejectedStatus is the Failed status upstream's rejectPod records for a pod it did not admit.
//
// Unsupported is nodelet's own check, where upstream has none because it honours everything:
// a pod that sets a field to a value nodelet cannot honour (hostUsers: false, resource
// claims, a volume type nodelet does not set up...) is refused with reason
// UnsupportedPodSpec and a message naming each such field by its path, rather than run
// differently from what it asks. UnsupportedFields lists them for docs/pod-fields.md
// (internal/podfields).
//
// Everything here is a pure function of the Node, the pod and the admitted pods.
package admission
