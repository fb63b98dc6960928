package cli

import (
	"encoding/json"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// printPodObjects prints pods as `kubectl get pods -o json|yaml|name` does: one named pod as
// itself, otherwise a v1 List of them; keys sorted (kubectl prints what the API server sent as
// unstructured objects), JSON indented by four spaces.
func printPodObjects(out io.Writer, pods []*v1.Pod, format string, single bool) error {
	if format == "name" {
		for _, p := range pods {
			fmt.Fprintf(out, "pod/%s\n", p.Name)
		}
		return nil
	}
	items := make([]any, 0, len(pods))
	for _, p := range pods {
		obj, err := toMap(withTypeMeta(p))
		if err != nil {
			return err
		}
		items = append(items, obj)
	}
	var doc any = map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}}
	if single && len(items) == 1 {
		doc = items[0]
	}
	switch format {
	case "json":
		b, err := json.MarshalIndent(doc, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	return fmt.Errorf("unknown output format %q", format)
}

func withTypeMeta(p *v1.Pod) *v1.Pod {
	c := p.DeepCopy()
	c.APIVersion, c.Kind = "v1", "Pod"
	return c
}

// toMap renders v as the JSON object it encodes to (keys then print sorted).
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}
