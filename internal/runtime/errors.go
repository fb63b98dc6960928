package runtime

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Waiting reasons, as upstream's images and kuberuntime packages spell them.
const (
	ReasonErrImagePull               = "ErrImagePull"
	ReasonImagePullBackOff           = "ImagePullBackOff"
	ReasonErrImageNeverPull          = "ErrImageNeverPull"
	ReasonInvalidImageName           = "InvalidImageName"
	ReasonCrashLoopBackOff           = "CrashLoopBackOff"
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	ReasonCreateContainerError       = "CreateContainerError"
	ReasonRunContainerError          = "RunContainerError"
	ReasonPreStartHookError          = "PreStartHookError"
)

// ContainerError is a failure to start a container, with the waiting reason status shows.
type ContainerError struct {
	Container string
	Reason    string
	Message   string
	Err       error
}

func (e *ContainerError) Error() string { return e.Reason + ": " + e.Message }
func (e *ContainerError) Unwrap() error { return e.Err }

func isNotFound(err error) bool {
	return status.Code(err) == codes.NotFound
}
