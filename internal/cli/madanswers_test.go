package cli

import (
	"os"
	"strings"
	"testing"
)

// rocetap.mad.response_in needs the response, which comes after the
// request: decode reads the file twice when -e or -Y names it, and a
// capture on stdin, which cannot be read twice, leaves it empty.
func TestMADResponseIn(t *testing.T) {
	f := td + "synth/roce_sa.pcap"
	out, errOut, code := run(t, nil, "decode", "-r", f, "-Y", "rocetap.mad.response_in", "-T", "fields", "-e", "frame.number", "-e", "rocetap.mad.response_in")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "1\t2\n4\t5\n6\t7\n13\t15\n16\t17\n19\t20\n23\t24\n"; out != want {
		t.Errorf("from a file:\n%s\nwant\n%s", out, want)
	}
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, data, "decode", "-r", "-", "-T", "fields", "-e", "rocetap.mad.response_in", "-e", "rocetap.mad.response_to")
	if code != 0 {
		t.Fatalf("stdin: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "2\t") || !strings.Contains(out, "\t1\n") {
		t.Errorf("from stdin: response_in must stay empty, response_to be set:\n%s", out)
	}
}
