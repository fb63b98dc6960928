package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
)

// getPods runs `nodelet get pods [NAME...] [-n NAMESPACE | -A] [-o wide|json|yaml|name]`.
func (c *command) getPods(ctx context.Context, args []string) int {
	var server, namespace, output string
	var allNamespaces bool
	fs := newFlagSet("get", &server)
	fs.StringVarP(&namespace, "namespace", "n", "default", "namespace of the pods")
	fs.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the pods of all namespaces")
	fs.StringVarP(&output, "output", "o", "", "output format: wide (adds IP, NODE, NOMINATED NODE and READINESS GATES), json, yaml or name")
	if code, done := c.parse(fs, args); done {
		return code
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return c.usageError("you must specify the type of resource to get: pods")
	}
	switch rest[0] {
	case "pods", "pod", "po":
	default:
		return c.fail("the server doesn't have a resource type %q", rest[0])
	}
	names := rest[1:]
	switch output {
	case "", "wide", "json", "yaml", "name":
	default:
		return c.fail("unable to match a printer suitable for the output format %q, allowed formats are: json,name,wide,yaml", output)
	}
	if allNamespaces && len(names) > 0 {
		return c.fail("a resource cannot be retrieved by name across all namespaces")
	}

	pods, err := c.listPods(ctx, server)
	if err != nil {
		return c.report(err)
	}
	var shown []*v1.Pod
	for i := range pods {
		if allNamespaces || pods[i].Namespace == namespace {
			shown = append(shown, &pods[i])
		}
	}
	// The API server lists by namespace and name; so does this.
	slices.SortFunc(shown, func(a, b *v1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})

	code := exitOK
	if len(names) > 0 {
		var named []*v1.Pod
		var missing []string
		for _, name := range names {
			i := slices.IndexFunc(shown, func(p *v1.Pod) bool { return p.Name == name })
			if i < 0 {
				missing = append(missing, name)
				continue
			}
			named = append(named, shown[i])
		}
		shown = named
		defer func() {
			for _, name := range missing {
				fmt.Fprintln(c.errOut, notFound(name).Error())
			}
		}()
		if len(missing) > 0 {
			code = exitError
		}
	}
	if len(shown) == 0 {
		if len(names) == 0 {
			if allNamespaces {
				fmt.Fprintln(c.errOut, "No resources found")
			} else {
				fmt.Fprintf(c.errOut, "No resources found in %s namespace.\n", namespace)
			}
		}
		return code
	}
	if output == "json" || output == "yaml" || output == "name" {
		if err := printPodObjects(c.out, shown, output, len(names) == 1); err != nil {
			return c.fail("%v", err)
		}
		return code
	}
	if err := printPodTable(c.out, shown, allNamespaces, output == "wide", c.clock.Now()); err != nil {
		return c.fail("%v", err)
	}
	return code
}

// printPodTable prints pods as `kubectl get pods` does: upper-case headers and columns
// aligned by a tabwriter with kubectl's settings (minimum width 6, padding 3 spaces).
func printPodTable(out io.Writer, pods []*v1.Pod, withNamespace, wide bool, now time.Time) error {
	tw := tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
	header := []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}
	if wide {
		header = append(header, "IP", "NODE", "NOMINATED NODE", "READINESS GATES")
	}
	if withNamespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, p := range pods {
		r := printPod(p, now)
		cells := []string{r.name, r.ready, r.status, r.restarts, r.age}
		if wide {
			cells = append(cells, r.ip, r.node, r.nominatedNode, r.readinessGates)
		}
		if withNamespace {
			cells = append([]string{p.Namespace}, cells...)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
