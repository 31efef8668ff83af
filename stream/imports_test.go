package stream

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports: stream builds on capture, decode, decode/filter and flow
// only; never hca (the tracker brings its MPT model), the UI or the
// commands.
func TestImports(t *testing.T) {
	const mod = "github.com/rocetap/rocetap/"
	allowed := map[string]bool{mod + "capture": true, mod + "decode": true, mod + "decode/filter": true, mod + "flow": true}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, mod) && !allowed[path] {
				t.Errorf("%s imports %s: stream may import only capture, decode, decode/filter and flow", name, path)
			}
		}
	}
}
