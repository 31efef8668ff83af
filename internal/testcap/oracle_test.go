package testcap

import (
	"runtime"
	"strings"
	"testing"
)

// fakeTB records how a helper ended a test. Skip and Fatal end the
// goroutine, as testing's do, so code after them does not run.
type fakeTB struct {
	testing.TB
	skipped, failed, logged string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skip(args ...any) {
	f.skipped = args[0].(string)
	runtime.Goexit()
}

func (f *fakeTB) Fatal(args ...any) {
	f.failed = args[0].(string)
	runtime.Goexit()
}

func (f *fakeTB) Log(args ...any) { f.logged = args[0].(string) }

// run calls helper on a fakeTB in a goroutine of its own, and says
// whether helper returned (rather than ending the test).
func run(helper func(testing.TB)) (f *fakeTB, returned bool) {
	f = &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(f)
		returned = true
	}()
	<-done
	return f, returned
}

func TestOracleMissing(t *testing.T) {
	const what, install = "frobnicator is not installed", "apt-get install -y frobnicator"
	missing := func(t testing.TB) { OracleMissing(t, what, install) }
	partMissing := func(t testing.TB) { OraclePartMissing(t, what, install) }
	for _, tc := range []struct {
		name     string
		env      string
		helper   func(testing.TB)
		want     string // what the helper does: "skip", "fail" or "log"
		returned bool   // the test goes on
	}{
		{"missing, not required", "", missing, "skip", false},
		{"missing, variable 0", "0", missing, "skip", false},
		{"missing, required", "1", missing, "fail", false},
		{"part missing, not required", "", partMissing, "log", true},
		{"part missing, required", "1", partMissing, "fail", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(RequireOraclesEnv, tc.env)
			f, returned := run(tc.helper)
			if returned != tc.returned {
				t.Errorf("helper returned: %v, want %v", returned, tc.returned)
			}
			msg := map[string]string{"skip": f.skipped, "fail": f.failed, "log": f.logged}[tc.want]
			if msg == "" || f.skipped+f.failed+f.logged != msg {
				t.Fatalf("skipped %q, failed %q, logged %q: want only a %s", f.skipped, f.failed, f.logged, tc.want)
			}
			for _, w := range []string{what, install, "ROCETAP_REQUIRE_ORACLES=1"} {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
		})
	}
}

func TestTool(t *testing.T) {
	const missing = "rocetap-no-such-tool"
	for _, tc := range []struct {
		name, tool, env string
		part            bool   // ToolPart, else Tool
		want            string // "found", or what the helper does: "skip", "fail" or "log"
	}{
		{"found", "sh", "1", false, "found"},
		{"not found", missing, "", false, "skip"},
		{"not found, required", missing, "1", false, "fail"},
		{"part found", "sh", "1", true, "found"},
		{"part not found", missing, "", true, "log"},
		{"part not found, required", missing, "1", true, "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(RequireOraclesEnv, tc.env)
			look := Tool
			if tc.part {
				look = ToolPart
			}
			var path string
			f, returned := run(func(tb testing.TB) { path = look(tb, tc.tool, "apt-get install -y "+tc.tool) })
			if tc.want == "found" {
				if !returned || path == "" || f.skipped+f.failed+f.logged != "" {
					t.Fatalf("%s: path %q, skipped %q, failed %q, logged %q", tc.tool, path, f.skipped, f.failed, f.logged)
				}
				return
			}
			msg := map[string]string{"skip": f.skipped, "fail": f.failed, "log": f.logged}[tc.want]
			if returned != (tc.want == "log") || path != "" || msg == "" || f.skipped+f.failed+f.logged != msg ||
				!strings.Contains(msg, tc.tool+" is not installed") || !strings.Contains(msg, "apt-get install -y "+tc.tool) {
				t.Fatalf("returned %v, path %q, skipped %q, failed %q, logged %q: want a %s naming %s and how to install it",
					returned, path, f.skipped, f.failed, f.logged, tc.want, tc.tool)
			}
		})
	}
}
