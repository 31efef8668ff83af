package layering

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rocetap/rocetap/"

// allowed lists, for each of rocetap's packages, the packages of rocetap
// its non-test code may import. A package missing here fails the test, so
// a new package must be placed in the layering on purpose. "*" allows any
// package but internal/cli (tools and test helpers).
var allowed = map[string][]string{
	// The bottom: decoding and capture files know nothing of ours.
	"decode":        {},
	"decode/filter": {"decode"},
	"capture":       {},
	// The model and the tracker.
	"hca":  {"decode"},
	"flow": {"decode", "hca"},
	// The packet road: read → decode → track.
	"stream": {"capture", "decode", "decode/filter", "flow"},
	// Two captures of the same traffic compared (rocetap path).
	"pathcmp": {"decode", "flow", "stream"},
	// MPT files and their inference; replay into the model.
	"mpt":       {"decode", "hca", "internal/text"},
	"mpt/learn": {"mpt", "decode", "hca", "flow", "internal/text"},
	"replay":    {"decode", "hca", "flow", "internal/text"},
	// Presentation.
	"internal/text":    {},
	"internal/outfile": {}, // files written without losing the user's
	"internal/gcphase": {}, // the collector's setting for a tracking phase
	"docs":             {}, // the reference documents, embedded
	"internal/printer": {"decode", "flow", "hca", "internal/text", "pathcmp"},
	"internal/editcap": {"capture", "decode", "stream", "internal/outfile"},
	"tui":              {"capture", "decode", "decode/filter", "flow", "hca", "stream", "internal/printer", "internal/text", "internal/outfile"},
	// The commands wire everything; only main imports them.
	"internal/cli": {"*"},
	"cmd/rocetap":  {"internal/cli"},
	// Test helpers and tools.
	"internal/layering":       {},
	"internal/conformance":    {"*"},
	"internal/testcap":        {"*"},
	"internal/synth":          {"*"},
	"internal/netnstest":      {"*"},
	"internal/tools/capbench": {"*"},
	"internal/tools/gencap":   {"*"},
	"internal/tools/tuibench": {"*"},
	"bench":                   {}, // tests of bench/lib.sh (no Go of its own)
}

// testHelpers are imported by tests and tools only.
var testHelpers = []string{"internal/testcap", "internal/synth", "internal/netnstest", "internal/conformance"}

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 15 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// violations returns what breaks the rules in pkgs.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module)
		rule, ok := allowed[name]
		if !ok {
			out = append(out, name+": not in the layering (internal/layering/layering_test.go): say which of rocetap's packages it may import")
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			switch {
			case dep == "internal/cli" && name != "cmd/rocetap":
				out = append(out, name+" imports internal/cli: only cmd/rocetap may")
			case slices.Contains(rule, "*"):
			case !slices.Contains(rule, dep):
				out = append(out, name+" imports "+dep+": it may import only "+strings.Join(rule, ", "))
			}
			if slices.Contains(testHelpers, dep) && !slices.Contains(rule, "*") {
				out = append(out, name+" imports the test helper "+dep)
			}
		}
	}
	return out
}

// TestImportRules checks every package's imports against allowed: decode
// and capture import nothing of ours, hca only decode, flow only decode
// and hca, and nothing imports internal/cli but cmd/rocetap.
func TestImportRules(t *testing.T) {
	for _, v := range violations(listPackages(t)) {
		t.Error(v)
	}
}

// TestViolationsAreFound feeds the checker imports that break the rules.
func TestViolationsAreFound(t *testing.T) {
	bad := []pkg{
		{ImportPath: module + "decode", Imports: []string{"fmt", module + "capture"}},
		{ImportPath: module + "capture", Imports: []string{module + "decode"}},
		{ImportPath: module + "hca", Imports: []string{module + "decode", module + "flow"}},
		{ImportPath: module + "flow", Imports: []string{module + "decode", module + "hca", module + "capture"}},
		{ImportPath: module + "tui", Imports: []string{module + "internal/cli"}},
		{ImportPath: module + "newpkg"},
		{ImportPath: module + "replay", Imports: []string{module + "internal/synth"}},
	}
	if got := violations(bad); len(got) != 8 {
		t.Fatalf("%d violations found, want 8 (one per bad import, two for replay's test helper):\n%s", len(got), strings.Join(got, "\n"))
	}
	good := []pkg{{ImportPath: module + "flow", Imports: []string{module + "decode", module + "hca", "time"}}}
	if got := violations(good); len(got) != 0 {
		t.Fatalf("flow importing decode and hca: %v", got)
	}
}
