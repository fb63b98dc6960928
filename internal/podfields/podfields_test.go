package podfields

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nodelet/nodelet/internal/admission"
)

var update = flag.Bool("update", false, "rewrite docs/pod-fields.md from the table")

// TestEveryFieldIsClassified is the rule made mechanical: every field of the pod spec is in
// the table, once, and the table names no field the API does not have. A field a new
// k8s.io/api adds fails here until someone says what nodelet does with it.
func TestEveryFieldIsClassified(t *testing.T) {
	walked := map[string]bool{}
	for _, f := range Walk() {
		walked[f.Path] = true
	}
	inTable := map[string]bool{}
	for _, f := range Fields() {
		if inTable[f.Path] {
			t.Errorf("%s is in the table twice", f.Path)
		}
		inTable[f.Path] = true
		if !walked[f.Path] {
			t.Errorf("%s is in the table but not in k8s.io/api's PodSpec (renamed or removed?)", f.Path)
		}
	}
	for _, f := range Walk() {
		if !inTable[f.Path] {
			t.Errorf("%s is not classified: add it to internal/podfields as honoured (naming the test that shows it) "+
				"or refused (naming what the user sees, e.g. an admission.Unsupported rule)", f.Path)
		}
	}
}

// TestEntries: each field is honoured with a test, refused with a reason, or both.
func TestEntries(t *testing.T) {
	for _, f := range Fields() {
		switch {
		case f.Test == "" && f.Refused == "":
			t.Errorf("%s: neither a test that shows it honoured nor a refusal", f.Path)
		case f.ControlPlane != "" && (f.Test == "" || f.Refused != ""):
			t.Errorf("%s: a control plane's field needs a test that shows nodelet leaves it alone, and no refusal", f.Path)
		case f.Note != "" && !strings.HasSuffix(f.Note, "."):
			t.Errorf("%s: the note %q is not a sentence", f.Path, f.Note)
		}
	}
}

// TestNamedTestsExist: every test the table names is a func Test... in a _test.go file of the
// repository.
func TestNamedTestsExist(t *testing.T) {
	root := repoRoot(t)
	defined := map[string]bool{}
	funcTest := regexp.MustCompile(`(?m)^func (Test\w*)\(`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "vendor" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range funcTest.FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Fields() {
		if f.Test != "" && !defined[f.Test] {
			t.Errorf("%s names %s, which no _test.go file under %s defines", f.Path, f.Test, root)
		}
	}
}

// TestUnsupportedMatchesAdmission: the fields refused as Unsupported are exactly those that
// admission's Unsupported check refuses.
func TestUnsupportedMatchesAdmission(t *testing.T) {
	checked := map[string]bool{}
	for _, u := range admission.UnsupportedFields() {
		checked[u.Field] = true
	}
	marked := map[string]bool{}
	for _, f := range Fields() {
		if f.Refused != Unsupported {
			continue
		}
		marked[admissionField(f.Path)] = true
		if !checked[admissionField(f.Path)] {
			t.Errorf("%s is refused as %s, but admission.Unsupported does not check %s", f.Path, Unsupported, admissionField(f.Path))
		}
	}
	for field := range checked {
		if !marked[field] {
			t.Errorf("admission.Unsupported refuses %s, but the table does not say so (Refused: Unsupported)", field)
		}
	}
}

// TestEnteredTypesAreReached: each type whose fields are listed one by one is reached at its
// canonical path.
func TestEnteredTypesAreReached(t *testing.T) {
	for typ, path := range entered() {
		found := path == "spec"
		for _, f := range Walk() {
			found = found || strings.HasPrefix(f.Path, path+".")
		}
		if !found {
			t.Errorf("%s is listed at %s, which the walk never reaches", typ, path)
		}
	}
}

// TestDocsPage: docs/pod-fields.md is the table's page; `go test ./internal/podfields -update`
// rewrites it.
func TestDocsPage(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "pod-fields.md")
	want := Markdown(Fields())
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run `go test ./internal/podfields -update`", err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run `go test ./internal/podfields -update`", path)
	}
}

// repoRoot is the directory of the module's go.mod above the package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}
