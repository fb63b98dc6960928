package runtimetest

import (
	"context"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// FakeImages fakes the CRI ImageService calls the manager makes, as cri-api's
// FakeImageService: images are known by name, and a successful pull adds the image.
type FakeImages struct {
	// OnPull, when set, runs at the start of PullImage (without the fake's lock), e.g. to
	// measure how many pulls run at once.
	OnPull func(image string)

	mu     sync.Mutex
	called []string
	errors map[string][]error
	images map[string]*runtimeapi.Image
	pulled []string
	auths  []*runtimeapi.AuthConfig // the credentials of each PullImage call, nil when anonymous
}

// NewFakeImages returns an image service with no images.
func NewFakeImages() *FakeImages {
	return &FakeImages{errors: map[string][]error{}, images: map[string]*runtimeapi.Image{}}
}

// SetFakeImages replaces the present images by these, with no user.
func (s *FakeImages) SetFakeImages(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.images = map[string]*runtimeapi.Image{}
	for _, n := range names {
		s.images[n] = makeImage(n)
	}
}

// SetImageUID makes the image (present or not) run as the numeric user uid.
func (s *FakeImages) SetImageUID(name string, uid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := s.imageLocked(name)
	img.Uid, img.Username = &runtimeapi.Int64Value{Value: uid}, ""
}

// SetImageUser makes the image (present or not) run as the named user.
func (s *FakeImages) SetImageUser(name, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := s.imageLocked(name)
	img.Uid, img.Username = nil, user
}

func (s *FakeImages) imageLocked(name string) *runtimeapi.Image {
	img, ok := s.images[name]
	if !ok {
		img = makeImage(name)
		s.images[name] = img
	}
	return img
}

// RemoveImage forgets an image, as the image garbage collector would.
func (s *FakeImages) RemoveImage(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.images, name)
}

func makeImage(name string) *runtimeapi.Image {
	return &runtimeapi.Image{Id: "sha256:" + name, RepoTags: []string{name}, Size: 1 << 20,
		Spec: &runtimeapi.ImageSpec{Image: name}}
}

// InjectError makes the next call of method ("PullImage", "ImageStatus") fail with err.
func (s *FakeImages) InjectError(method string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors[method] = append(s.errors[method], err)
}

// GetCalls returns the method names called so far, in order.
func (s *FakeImages) GetCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.called...)
}

// CallCount returns how many times method was called.
func (s *FakeImages) CallCount(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.called {
		if c == method {
			n++
		}
	}
	return n
}

// Pulled returns the images pulled successfully, in order.
func (s *FakeImages) Pulled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.pulled...)
}

// PullAuths returns the credentials each PullImage call passed (nil for an anonymous pull), in
// order, failed calls included.
func (s *FakeImages) PullAuths() []*runtimeapi.AuthConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*runtimeapi.AuthConfig, len(s.auths))
	for i, a := range s.auths {
		if a != nil {
			out[i] = proto.Clone(a).(*runtimeapi.AuthConfig)
		}
	}
	return out
}

func (s *FakeImages) call(method string) error {
	s.called = append(s.called, method)
	errs := s.errors[method]
	if len(errs) == 0 {
		return nil
	}
	s.errors[method] = errs[1:]
	return errs[0]
}

// ImageStatus returns the image, or a response without one when it is not present.
func (s *FakeImages) ImageStatus(_ context.Context, image *runtimeapi.ImageSpec, _ bool) (*runtimeapi.ImageStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("ImageStatus"); err != nil {
		return nil, err
	}
	img, ok := s.images[image.GetImage()]
	if !ok {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: proto.Clone(img).(*runtimeapi.Image)}, nil
}

// PullImage makes the image present and returns its ID, recording the credentials.
func (s *FakeImages) PullImage(_ context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	s.mu.Lock()
	hook := s.OnPull
	s.mu.Unlock()
	if hook != nil {
		hook(image.GetImage())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if auth != nil {
		auth = proto.Clone(auth).(*runtimeapi.AuthConfig)
	}
	s.auths = append(s.auths, auth)
	if err := s.call("PullImage"); err != nil {
		return "", err
	}
	if image.GetImage() == "" {
		return "", status.Error(codes.InvalidArgument, "image name is empty")
	}
	s.pulled = append(s.pulled, image.GetImage())
	return s.imageLocked(image.GetImage()).Id, nil
}
