package runtime

import (
	"time"

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
	// Until is when a back-off ends (CrashLoopBackOff, ImagePullBackOff); zero otherwise.
	Until time.Time
}

// RetryAt tells the pod worker when retrying is worthwhile; with no back-off, the worker's own
// back-off period applies.
func (e *ContainerError) RetryAt() time.Time { return e.Until }

func (e *ContainerError) Error() string { return e.Reason + ": " + e.Message }
func (e *ContainerError) Unwrap() error { return e.Err }

func isNotFound(err error) bool {
	return status.Code(err) == codes.NotFound
}
