package podconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// HTTPConfig configures the manifest URL source.
type HTTPConfig struct {
	URL      string
	Header   http.Header
	NodeName string
	// Period is the poll interval (httpCheckFrequency, 20 s upstream).
	Period   time.Duration
	Clock    clock.WithTicker
	Sink     Sink
	Reporter Reporter
	// Client defaults to one with a 10 s timeout, as upstream's.
	Client *http.Client
}

type httpSource struct {
	cfg      HTTPConfig
	lastBody []byte
	lastErr  string
}

// RunHTTPSource polls cfg.URL until ctx ends. The URL serves a Pod or a PodList. A failed poll
// (timeout, non-200 status, redirect loop, oversized or undecodable body) keeps the pods of the
// last good poll and is reported once until the error changes; an empty body means no pods.
func RunHTTPSource(ctx context.Context, cfg HTTPConfig) error {
	if cfg.URL == "" || cfg.Sink == nil || cfg.Reporter == nil || cfg.Clock == nil || cfg.Period <= 0 {
		return errors.New("http source: URL, Sink, Reporter, Clock and a positive Period are required")
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	s := &httpSource{cfg: cfg}
	ticker := cfg.Clock.NewTicker(cfg.Period)
	defer ticker.Stop()
	for {
		if pods, changed, err := s.poll(ctx); err != nil {
			s.report(err)
		} else {
			if s.lastErr != "" {
				klog.InfoS("Manifest URL readable again", "url", cfg.URL)
				s.lastErr = ""
			}
			if changed {
				if err := cfg.Sink.Send(ctx, HTTPSource, pods); err != nil {
					return nil //nolint:nilerr // ctx ended
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

func (s *httpSource) report(err error) {
	if err.Error() == s.lastErr {
		klog.V(4).InfoS("Manifest URL still failing", "url", s.cfg.URL, "err", err)
		return
	}
	s.lastErr = err.Error()
	s.cfg.Reporter.Report(HTTPSource, s.cfg.URL, err)
}

// poll fetches the URL. changed is false when the body is the same as last time.
func (s *httpSource) poll(ctx context.Context) (pods []*v1.Pod, changed bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return nil, false, fmt.Errorf("build request: %w", err)
	}
	req.Header = s.cfg.Header.Clone()
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("fetch: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxManifestBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("server answered %s", resp.Status)
	}
	if len(data) > MaxManifestBytes {
		return nil, false, fmt.Errorf("body is larger than the %d bytes allowed", MaxManifestBytes)
	}
	if s.lastBody != nil && bytes.Equal(data, s.lastBody) {
		return nil, false, nil
	}
	s.lastBody = data
	if len(bytes.TrimSpace(data)) == 0 {
		klog.InfoS("Manifest URL served an empty body: no pods from it", "url", s.cfg.URL)
		return []*v1.Pod{}, true, nil
	}
	parsed := ParseManifest(data, s.cfg.URL, false, s.cfg.NodeName)
	if len(parsed.Errs) > 0 && len(parsed.Pods) == 0 {
		s.lastBody = nil // a body that yields nothing is re-read, and the last good pods kept
		return nil, false, errors.Join(parsed.Errs...)
	}
	for _, err := range parsed.Errs {
		// Upstream refuses a whole PodList for one bad item; nodelet keeps the good ones.
		s.cfg.Reporter.Report(HTTPSource, s.cfg.URL, err)
	}
	return parsed.Pods, true, nil
}
