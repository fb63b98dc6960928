package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"
)

// versionInfo is what `nodelet version` prints.
type versionInfo struct {
	Version   string `json:"version"`   // nodelet's, e.g. v1.37.1-nodelet
	Upstream  string `json:"upstream"`  // the upstream kubelet release whose behaviour it follows
	GitCommit string `json:"gitCommit"` // the build's VCS revision, when it was built in a checkout
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// version runs `nodelet version [-o json]`.
func (c *command) version(args []string, version string) int {
	fs := pflag.NewFlagSet("version", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var output string
	fs.StringVarP(&output, "output", "o", "", "json: print the version as a JSON object")
	if code, done := c.parse(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageError("version takes no arguments")
	}
	info := versionInfo{Version: version, Upstream: upstreamOf(version), GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.GitCommit = s.Value
			}
		}
	}
	switch output {
	case "":
		fmt.Fprintf(c.out, "nodelet %s (the upstream kubelet %s's behaviour)\n", info.Version, info.Upstream)
		if info.GitCommit != "" {
			fmt.Fprintf(c.out, "Git commit: %s\n", info.GitCommit)
		}
		fmt.Fprintf(c.out, "Go: %s %s\n", info.GoVersion, info.Platform)
	case "json":
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return c.fail("%v", err)
		}
		fmt.Fprintf(c.out, "%s\n", b)
	default:
		return c.fail("--output must be json, not %q", output)
	}
	return exitOK
}

// upstreamOf is the upstream release of a nodelet version (v1.37.1-nodelet → v1.37.1).
func upstreamOf(v string) string {
	upstream, _, _ := strings.Cut(v, "-")
	return upstream
}
