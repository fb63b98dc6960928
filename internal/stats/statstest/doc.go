// Package statstest provides a fake CRI runtime for tests of the stats provider: the six CRI
// verbs the provider reads, answering from fields the test sets. (cri-api's
// k8s.io/cri-api/pkg/apis/testing fakes would do too, but importing them adds testify and
// yaml.v3 to nodelet's go.mod; see internal/kuberuntime/runtimetest.)
package statstest
