package kuberuntime

import (
	"errors"
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
	// ReasonPostStartHookError is upstream's ErrPostStartHook: the postStart hook failed and
	// the container was killed; it restarts per the restart policy, with the crash back-off.
	ReasonPostStartHookError = "PostStartHookError"
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

// syncErrors are the failures of one SyncPod. Its RetryAt is the earliest back-off end among
// them, or zero (the worker's own back-off) when any failure has no back-off of its own, so that
// a container waiting out a long back-off never delays the retry of another.
type syncErrors []error

func (e syncErrors) Error() string   { return errors.Join(e...).Error() }
func (e syncErrors) Unwrap() []error { return e }

// RetryAt implements the pod workers' RetryAt.
func (e syncErrors) RetryAt() time.Time {
	var earliest time.Time
	for _, err := range e {
		var ce *ContainerError
		if !errors.As(err, &ce) || ce.Until.IsZero() {
			return time.Time{}
		}
		if earliest.IsZero() || ce.Until.Before(earliest) {
			earliest = ce.Until
		}
	}
	return earliest
}

// add appends err to the sync's errors.
func addErr(res *SyncResult, err error) {
	var se syncErrors
	if res.Err != nil && !errors.As(res.Err, &se) {
		se = syncErrors{res.Err}
	}
	res.Err = append(se, err)
}
