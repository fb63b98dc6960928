//go:build tools

package deps

import (
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/spf13/pflag"
	_ "google.golang.org/grpc"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/util/validation"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/tools/record"
	_ "k8s.io/component-helpers/apimachinery/lease"
	_ "k8s.io/component-helpers/resource"
	_ "k8s.io/component-helpers/scheduling/corev1"
	_ "k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	_ "k8s.io/cri-api/pkg/apis/runtime/v1"
	_ "k8s.io/klog/v2"
	_ "k8s.io/kubelet/config/v1beta1"
	_ "k8s.io/utils/clock"
	_ "sigs.k8s.io/yaml"
)
