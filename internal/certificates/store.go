package certificates

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/atomicfile"
)

// ErrNoCertificate is Store.Current's error when the store has no certificate yet.
var ErrNoCertificate = errors.New("no certificate in the store")

// Store keeps a certificate and its key in a directory as upstream's file store does:
// <dir>/<pair>-<time>.pem holds the certificate and the key, and <dir>/<pair>-current.pem is
// a symlink to the newest, swapped atomically.
type Store struct {
	dir, pair string
	clock     clock.PassiveClock
}

// NewStore returns the store of pair ("kubelet-client", "kubelet-server") in dir.
func NewStore(dir, pair string, clk clock.PassiveClock) *Store {
	return &Store{dir: dir, pair: pair, clock: clk}
}

// CurrentPath is the path of the current pair, what a kubeconfig written after TLS bootstrap
// names as its client certificate and key.
func (s *Store) CurrentPath() string { return filepath.Join(s.dir, s.pair+"-current.pem") }

// Current loads the current pair; ErrNoCertificate when there is none.
func (s *Store) Current() (*tls.Certificate, error) {
	data, err := os.ReadFile(s.CurrentPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoCertificate
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.CurrentPath(), err)
	}
	c, err := parsePair(data, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.CurrentPath(), err)
	}
	return c, nil
}

// Update writes a new pair and makes it current.
func (s *Store) Update(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	c, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("certificate directory: %w", err)
	}
	name := fmt.Sprintf("%s-%s.pem", s.pair, s.clock.Now().UTC().Format("2006-01-02-15-04-05"))
	path := filepath.Join(s.dir, name)
	if err := atomicfile.WriteFile(path, append(append([]byte{}, certPEM...), keyPEM...), 0o600); err != nil {
		return nil, err
	}
	tmp := s.CurrentPath() + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(name, tmp); err != nil {
		return nil, fmt.Errorf("link %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, s.CurrentPath()); err != nil {
		return nil, fmt.Errorf("make %s current: %w", path, err)
	}
	return c, nil
}

// parsePair parses a certificate chain and its key, with Leaf set.
func parsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate and key: %w", err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, fmt.Errorf("certificate: %w", err)
		}
	}
	return &c, nil
}
