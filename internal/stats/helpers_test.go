package stats

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	internalapi "k8s.io/cri-api/pkg/apis"

	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/stats/statstest"
)

// The real client, any cri-api RuntimeService / ImageManagerService (cri-api's fakes among
// them) and statstest's fake serve the provider; the provider serves the collector.
var (
	_ Runtime            = (*cri.Client)(nil)
	_ ImageService       = (*cri.Client)(nil)
	_ Runtime            = internalapi.RuntimeService(nil)
	_ ImageService       = internalapi.ImageManagerService(nil)
	_ Runtime            = (*statstest.Runtime)(nil)
	_ ImageService       = (*statstest.Runtime)(nil)
	_ CPUAndMemorySource = (*Provider)(nil)
)

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// writeTree writes files (path relative to root → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
