package streamtranslate

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/exec"
)

func TestOutcomeStatus(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web")
	for _, tc := range []struct {
		name string
		err  error
		want metav1.Status
	}{
		{"success", nil, metav1.Status{Status: metav1.StatusSuccess}},
		{"non-zero exit", exec.CodeExitError{Err: errors.New("command terminated with exit code 3"), Code: 3}, metav1.Status{
			Status:  metav1.StatusFailure,
			Reason:  "NonZeroExitCode",
			Message: "command terminated with non-zero exit code: command terminated with exit code 3",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: "3"}}},
		}},
		{"exit code 255", exec.CodeExitError{Err: errors.New("x"), Code: 255}, metav1.Status{
			Status:  metav1.StatusFailure,
			Reason:  "NonZeroExitCode",
			Message: "command terminated with non-zero exit code: x",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: "255"}}},
		}},
		{"the runtime's status", notFound, notFound.Status()},
		{"the runtime's status, wrapped", fmt.Errorf("upgrade: %w", notFound), notFound.Status()},
		{"anything else", errors.New("unable to upgrade connection: gone"), metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusInternalServerError,
			Reason:  metav1.StatusReasonInternalError,
			Message: "Internal error occurred: unable to upgrade connection: gone",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Message: "unable to upgrade connection: gone"}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeStatus(tc.err); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("outcomeStatus(%v) =\n%+v\nwant\n%+v", tc.err, got, tc.want)
			}
		})
	}
}
