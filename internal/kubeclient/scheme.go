package kubeclient

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// groups are the API groups nodelet talks to, with what their REST clients need.
var groups = []struct {
	gv      schema.GroupVersion
	apiPath string
	install func(*runtime.Scheme) error
}{
	{corev1.SchemeGroupVersion, "/api", corev1.AddToScheme},
	{coordinationv1.SchemeGroupVersion, "/apis", coordinationv1.AddToScheme},
	{nodev1.SchemeGroupVersion, "/apis", nodev1.AddToScheme},
	{authenticationv1.SchemeGroupVersion, "/apis", authenticationv1.AddToScheme},
	{authorizationv1.SchemeGroupVersion, "/apis", authorizationv1.AddToScheme},
	{certificatesv1.SchemeGroupVersion, "/apis", certificatesv1.AddToScheme},
}

// NewScheme returns a scheme with the API groups nodelet uses (what client-go's
// kubernetes/scheme does for every group). The event recorder takes it too, to find the kind of
// the objects events are about.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, g := range groups {
		utilruntime.Must(g.install(s))
		metav1.AddToGroupVersion(s, g.gv)
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}

// codecs are a scheme's serializers (JSON and protobuf) and its parameter codec.
type codecs struct {
	factory    serializer.CodecFactory
	parameters runtime.ParameterCodec
}

func newCodecs(s *runtime.Scheme) codecs {
	return codecs{factory: serializer.NewCodecFactory(s), parameters: runtime.NewParameterCodec(s)}
}
