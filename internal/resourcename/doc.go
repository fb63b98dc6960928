// Package resourcename classifies resource names as upstream's v1helper does
// (k8s.io/kubernetes/pkg/apis/core/v1/helper, which is not importable outside
// k8s.io/kubernetes): node status and admission both need it.
package resourcename
