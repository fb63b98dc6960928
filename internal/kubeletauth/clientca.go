package kubeletauth

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// clientCAReloadPeriod is how often the client CA file is read again, as k8s.io/apiserver's
// DynamicFileCAContent polls it.
const clientCAReloadPeriod = time.Minute

// clientCA is authentication.x509.clientCAFile, read at start (an unreadable or invalid file
// is an error then) and again every minute: a changed bundle is used from then on, an invalid
// one is logged and the previous kept. It stands for k8s.io/apiserver's DynamicFileCAContent,
// whose package links the API server's certificate controllers and their informers.
type clientCA struct {
	path    string
	content []byte // owned by Run's goroutine after construction
	opts    atomic.Pointer[x509.VerifyOptions]
}

func newClientCA(path string) (*clientCA, error) {
	c := &clientCA{path: path}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// load reads the bundle; unchanged content is not parsed again.
func (c *clientCA) load() error {
	content, err := os.ReadFile(c.path)
	if err != nil {
		return err
	}
	if c.content != nil && bytes.Equal(content, c.content) {
		return nil
	}
	pool, err := certutil.NewPoolFromBytes(content)
	if err != nil {
		return fmt.Errorf("parse the CA bundle: %w", err)
	}
	opts := x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	c.opts.Store(&opts)
	if c.content != nil {
		klog.InfoS("Loaded a new client CA bundle for the kubelet API", "file", c.path)
	}
	c.content = content
	return nil
}

// VerifyOptions is what the x509 authenticator verifies client certificates with.
func (c *clientCA) VerifyOptions() (x509.VerifyOptions, bool) {
	return *c.opts.Load(), true
}

// Run reloads the bundle every clientCAReloadPeriod until ctx ends.
func (c *clientCA) Run(ctx context.Context, clk clock.WithTicker) {
	t := clk.NewTicker(clientCAReloadPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := c.load(); err != nil {
				klog.ErrorS(err, "Cannot reload the kubelet API's client CA file; keeping the previous bundle. Fix the file", "file", c.path)
			}
		}
	}
}
