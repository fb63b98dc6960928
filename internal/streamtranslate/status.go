package streamtranslate

import (
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/util/exec"
)

// outcomeStatus is the Status a translated session ends with, written on the error channel
// where a v4/v5 client reads it: Success for nil; the runtime's own Status when it answered
// with one (it refused the session); NonZeroExitCode with an ExitCode cause when the command
// exited non-zero (the client turns it back into an exit error with that code); an
// InternalError for anything else.
func outcomeStatus(err error) metav1.Status {
	if err == nil {
		return metav1.Status{Status: metav1.StatusSuccess}
	}
	var statusErr *apierrors.StatusError
	if errors.As(err, &statusErr) {
		return statusErr.Status()
	}
	var exitErr exec.CodeExitError
	if errors.As(err, &exitErr) && exitErr.Exited() {
		return exitStatus(exitErr)
	}
	return apierrors.NewInternalError(err).Status()
}

// exitStatus is the Status of a command that exited with a non-zero code, in the form
// client-go's v4 error decoder recognises.
func exitStatus(exitErr exec.CodeExitError) metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Reason:  remotecommandconsts.NonZeroExitCodeReason,
		Message: fmt.Sprintf("command terminated with non-zero exit code: %v", exitErr),
		Details: &metav1.StatusDetails{
			Causes: []metav1.StatusCause{{
				Type:    remotecommandconsts.ExitCodeCauseType,
				Message: strconv.Itoa(exitErr.ExitStatus()),
			}},
		},
	}
}
