// Package podfields is nodelet's rule made mechanical: every field a user sets in a pod is
// honoured as the upstream kubelet honours it, or refused with a clear reason, never silently
// dropped.
//
// Walk lists every field of v1.PodSpec by reflection, as JSON paths
// ("spec.securityContext.sysctls", "spec.containers[].resizePolicy"): the fields of the pod
// spec, its security context, containers (init containers have the same), ephemeral
// containers, the container's security context, resources, environment, ports, mounts, probes
// and hooks, and volumes, each volume type nodelet supports field by field and every other
// type as one field. Fields lists what nodelet does with each, in a few lines per field:
//
//	honoured(path, test, note)        as upstream; test (a func Test... of the repository) shows it
//	partly(path, test, refused, note) as upstream, but some values are refused
//	refused(path, refused, note)      refused whatever the value
//	controlPlane(path, who, test, ..) only the scheduler, API server or controllers use it
//
// A refusal is mostly Unsupported: internal/admission's Unsupported check, which fails the pod
// with reason UnsupportedPodSpec and a message naming the field; the test checks that the two
// lists agree. The tests fail when a field of k8s.io/api is not in the table (a new API version
// added it), when the table names a field or a test that does not exist, and when
// docs/pod-fields.md, the page generated from the table, is stale:
//
//	go test ./internal/podfields -update   # rewrites docs/pod-fields.md
package podfields
