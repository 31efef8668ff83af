package testcap

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireOraclesEnv names the variable that turns a missing oracle from
// a skip into a failure: CI and make test set it to 1, so that a test
// that did not run cannot pass unseen.
const RequireOraclesEnv = "ROCETAP_REQUIRE_ORACLES"

// OraclesRequired says whether ROCETAP_REQUIRE_ORACLES=1.
func OraclesRequired() bool { return os.Getenv(RequireOraclesEnv) == "1" }

// OracleMissing ends a test that cannot run because an oracle is missing
// (a program, library or capture it checks rocetap against, or something
// of the machine it needs): it skips the test, or, with
// ROCETAP_REQUIRE_ORACLES=1, fails it. what says what is missing (and
// why, if known), install how to get it.
func OracleMissing(t testing.TB, what, install string) {
	t.Helper()
	if OraclesRequired() {
		t.Fatal(requiredMessage(what, install))
	}
	t.Skip(what + ": " + install + "; " + RequireOraclesEnv + "=1 makes this skip a failure")
}

// OraclePartMissing is OracleMissing for a part of a test, which goes on
// without it: it logs what the test leaves out, or, with
// ROCETAP_REQUIRE_ORACLES=1, fails the test.
func OraclePartMissing(t testing.TB, what, install string) {
	t.Helper()
	if OraclesRequired() {
		t.Fatal(requiredMessage(what, install))
	}
	t.Log(what + ": " + install + "; this part of the test is left out (" + RequireOraclesEnv + "=1 makes this a failure)")
}

func requiredMessage(what, install string) string {
	return fmt.Sprintf("%s: %s (a failure, not a skip, as %s=1)", what, install, RequireOraclesEnv)
}

// Tool returns the path of the oracle program name, found in $PATH; when
// it is not there, OracleMissing ends the test, saying install.
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	return lookTool(t, name, install, OracleMissing)
}

// ToolPart is Tool for a part of a test, which goes on without it: when
// name is missing, it returns "" after OraclePartMissing.
func ToolPart(t testing.TB, name, install string) string {
	t.Helper()
	return lookTool(t, name, install, OraclePartMissing)
}

func lookTool(t testing.TB, name, install string, missing func(t testing.TB, what, install string)) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		missing(t, name+" is not installed ("+err.Error()+")", install)
	}
	return path
}

// InstallTshark says how to get tshark, the field-by-field oracle.
const InstallTshark = "install it with `apt-get install -y tshark` (make test-deps does)"

// Tshark returns the path of tshark, or ends the test as OracleMissing.
func Tshark(t testing.TB) string {
	t.Helper()
	return Tool(t, "tshark", InstallTshark)
}
