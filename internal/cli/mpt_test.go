package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

func TestMPTLearnOutput(t *testing.T) {
	// To stdout: the file, and the notes on stderr.
	out, errOut, code := run(t, nil, "mpt", "learn", "-r", td+"rxe/read_atomic.pcap")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := mpt.Parse("stdout", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.QPs) != 1 || f.QPs[0].QPN != 0x17 || len(f.MRs) != 1 || f.MRs[0].RKey != 0x9d2 {
		t.Errorf("learned %+v", f)
	}
	if !strings.Contains(errOut, "rocetap mpt learn: responder 10.77.0.2 (sent 9 of the capture's 9 responses): 1 QP, 1 MR\n") {
		t.Errorf("stderr: %s", errOut)
	}
	// Stdin.
	data, err := os.ReadFile(td + "rxe/read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	out2, _, code := run(t, data, "mpt", "learn", "-r", "-")
	if code != 0 || out2 != out {
		t.Errorf("stdin: exit %d, output differs", code)
	}
}

func TestMPTLearnErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no capture", []string{"mpt", "learn"}, 1, "no capture given: use -r FILE"},
		{"argument", []string{"mpt", "learn", "x.pcap"}, 1, `unexpected argument "x.pcap": give files with flags (rocetap mpt learn -r FILE)`},
		{"no such file", []string{"mpt", "learn", "-r", "/nonexistent.pcap"}, 1, "nonexistent.pcap"},
		{"bad responder", []string{"mpt", "learn", "-r", td + "rxe/read_atomic.pcap", "--responder", "10.77.0"}, 1, `--responder "10.77.0": want an IPv4 address`},
		{"bad profile", []string{"mpt", "learn", "-r", td + "rxe/read_atomic.pcap", "--profile", "cx7"}, 1, `--profile: unknown responder profile "cx7"`},
		{"responder not in capture", []string{"mpt", "learn", "-r", td + "rxe/read_atomic.pcap", "--responder", "10.9.9.9"}, 1,
			"no request in the capture is sent to 10.9.9.9; requests go to 10.77.0.2 (1 QP)"},
		{"unwritable", []string{"mpt", "learn", "-r", td + "rxe/read_atomic.pcap", "-o", "/nonexistent/dir/x.json"}, 1, "-o /nonexistent/dir/x.json: the directory /nonexistent/dir does not exist"},
		{"existing", []string{"mpt", "learn", "-r", td + "rxe/read_atomic.pcap", "-o", td + "rxe/read_atomic.mpt.json"}, 1, "add --force"},
		{"the input", []string{"mpt", "learn", "-r", td + "rxe/read_atomic.pcap", "-o", td + "rxe/read_atomic.pcap", "--force"}, 1, "is the input file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, nil, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestMPTLearnCorrupt: a capture corrupt part-way still gives the file of
// what came before, then exit status 2.
func TestMPTLearnCorrupt(t *testing.T) {
	data, err := os.ReadFile(td + "rxe/read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	// Cut the last record short: every packet before it is whole.
	path := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(path, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, nil, "mpt", "learn", "-r", path)
	if code != 2 || !strings.Contains(errOut, "rocetap mpt learn: responder 10.77.0.2") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := mpt.Parse("stdout", []byte(out)); err != nil {
		t.Error(err)
	}
}

// The verbs values of read_atomic's responder that rdma does not print.
var readAtomicFill = []string{"--responder", "10.77.0.2", "--remote", "10.77.0.1", "--mtu", "1024", "--profile", "rxe",
	"--qp-access", "LOCAL_WRITE,REMOTE_WRITE,REMOTE_READ,REMOTE_ATOMIC",
	"--va", "9d2=0x55555557b000", "--mr-access", "0x9d2=local_write|remote_write|remote_read|IBV_ACCESS_REMOTE_ATOMIC"}

func TestMPTImport(t *testing.T) {
	want, err := mpt.Load(td + "rxe/read_atomic.mpt.json")
	if err != nil {
		t.Fatal(err)
	}
	// The verbs data's PD is the ibv_pd handle (0); rdma's is the
	// kernel's pdn (7). rdma prints no receive queue,
	// max_dest_rd_atomic or min_rnr_timer.
	want.PDs = []hca.PDConfig{{ID: 7}}
	want.QPs[0].PD, want.MRs[0].PD = 7, 7
	q := &want.QPs[0]
	q.HasRecv, q.Recv, q.HasMaxDestRdAtomic, q.MaxDestRdAtomic, q.HasMinRNRTimer, q.MinRNRTimer = false, nil, false, 0, false, 0

	out, errOut, code := run(t, nil, append([]string{"mpt", "import", "--rdma-json", td + "rxe/read_atomic.rdma-res.json", "--dev", "rxe1"}, readAtomicFill...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := mpt.Parse("stdout", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("imported:\n%+v\nwant:\n%+v", got, want)
	}
	for _, s := range []string{"rocetap mpt import: rxe1: 1 PD, 1 QP, 1 MR\n", "note: PD ids are the kernel's pdn", "note: memory windows: not imported"} {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
	}

	// The same from separate views (as rdma prints them), to a file.
	dir := t.TempDir()
	views := map[string]string{
		"mr.json": `[{"ifindex":1,"ifname":"rxe1","mrn":7,"rkey":"9d2","lkey":"9d2","mrlen":8192,"pdn":7,"pid":974,"comm":"rxe_scen"}]`,
		"qp.json": `[{"ifindex":1,"ifname":"rxe1","port":1,"lqpn":23,"rqpn":23,"type":"RC","state":"RTS","rq-psn":768,"sq-psn":2816,"pdn":7,"pid":974,"comm":"rxe_scen"},` +
			`{"ifindex":1,"ifname":"rxe1","port":1,"lqpn":1,"type":"GSI","state":"RTS","sq-psn":0,"comm":"ib_core"}]`,
		"pd.json": `[{"ifindex":1,"ifname":"rxe1","pdn":7,"local_dma_lkey":"0","users":2,"ctxn":9,"pid":974,"comm":"rxe_scen"}]`,
	}
	for n, s := range views {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := filepath.Join(dir, "out.json")
	_, errOut, code = run(t, []byte(views["qp.json"]), append([]string{"mpt", "import", "--mr", filepath.Join(dir, "mr.json"), "--qp", "-",
		"--pd", filepath.Join(dir, "pd.json"), "--dev", "rxe1", "-o", o}, readAtomicFill...)...)
	if code != 0 || !strings.Contains(errOut, " -> "+o) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got2, err := mpt.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got2, want) {
		t.Errorf("from views:\n%+v\nwant:\n%+v", got2, want)
	}
}

// TestMPTImportIncomplete: without what rdma does not print, the import
// writes nothing and says what to supply, with the flag for each.
func TestMPTImportIncomplete(t *testing.T) {
	o := filepath.Join(t.TempDir(), "out.json")
	out, errOut, code := run(t, nil, "mpt", "import", "--rdma-json", td+"rxe/send_inv.rdma-res.json", "--dev", "rxe1", "-o", o)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if _, err := os.Stat(o); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", o, err)
	}
	for _, s := range []string{
		"rocetap: mpt import: the rdma output lacks 7 value(s) an MPT file needs; nothing written. Supply them:",
		"$.responder.address: the address of rxe1",
		"-> --responder ADDR",
		"$.qps[0].mtu: the path MTU of QP 0x000022",
		"-> --mtu N",
		"$.qps[0].access: the access flags of QP 0x000022 (rdma prints no qp_access_flags) -> --qp-access FLAGS",
		"$.mrs[0].va: the VA of MR lkey 0x1563 (mrn 19), 8192 bytes (this kernel prints no iova): the address the application registered -> --va 1563=ADDR",
		"$.mrs[0].access: the access flags of MR lkey 0x1563 (mrn 19) (rdma prints none) -> --mr-access 1563=FLAGS",
		"$.mrs[1].access: the access flags of MR lkey 0x1649 (mrn 20) (rdma prints none; rkey 0: on rxe an MR without remote access) -> --mr-access 1649=FLAGS (or --remote-mrs-only to leave it out)",
	} {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
	}
	// Supplied (the local MR left out), it is complete.
	_, errOut, code = run(t, nil, "mpt", "import", "--rdma-json", td+"rxe/send_inv.rdma-res.json", "--dev", "rxe1", "-o", o,
		"--responder", "10.77.0.2", "--mtu", "1024", "--qp-access", "", "--va", "1563=0x555555578000", "--mr-access", "1563=LOCAL_WRITE,REMOTE_WRITE,MW_BIND",
		"--remote-mrs-only")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := mpt.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.MRs) != 1 || f.QPs[0].Access != 0 || f.QPs[0].Remote != nil || !strings.Contains(errOut, "remote left out") {
		t.Errorf("imported %+v\n%s", f, errOut)
	}
}

func TestMPTImportErrors(t *testing.T) {
	rj := []string{"mpt", "import", "--rdma-json", td + "rxe/read_atomic.rdma-res.json"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", []string{"mpt", "import", "--dev", "rxe1"}, "no rdma output given: use --rdma-json FILE, or --mr FILE --qp FILE"},
		{"both", append(rj, "--mr", "m", "--dev", "rxe1"), "--rdma-json and --mr/--qp/--pd are alternatives"},
		{"qp without mr", []string{"mpt", "import", "--qp", "q", "--dev", "rxe1"}, "--mr and --qp go together"},
		{"no dev", rj, "no device: name the RDMA device to import with --dev"},
		{"bad snapshot", append(rj, "--dev", "rxe1", "--snapshot", "middle"), `--snapshot "middle": want before or after`},
		{"snapshot without rdma-json", []string{"mpt", "import", "--mr", "m", "--qp", "q", "--dev", "d", "--snapshot", "after"}, "--snapshot needs --rdma-json"},
		{"unknown dev", append(rj, "--dev", "mlx5_0"), `no resource of device "mlx5_0" in the rdma output (devices: rxe0, rxe1); name one of those`},
		{"bad mtu", append(rj, "--dev", "rxe1", "--mtu", "1500"), "MTU 1500 is not an InfiniBand MTU"},
		{"bad access", append(rj, "--dev", "rxe1", "--qp-access", "REMOTE_WRIT"), `--qp-access: unknown access flag "REMOTE_WRIT" (known: LOCAL_WRITE, REMOTE_WRITE`},
		{"bad va key", append(rj, "--dev", "rxe1", "--va", "xyz=0x1000"), `--va "xyz=0x1000": want KEY=VALUE with KEY the MR's lkey or rkey in hex`},
		{"bad va", append(rj, "--dev", "rxe1", "--va", "9d2=55555557b000"), `--va "9d2=55555557b000": "55555557b000" is not an address: write 0x and hex digits`},
		{"bad mr access", append(rj, "--dev", "rxe1", "--mr-access", "9d2=READ"), `--mr-access: unknown access flag "READ"`},
		{"bad remote", append(rj, "--dev", "rxe1", "--remote", "fe80::1%eth0"), `--remote "fe80::1%eth0": want an IPv4 address`},
		{"missing file", []string{"mpt", "import", "--rdma-json", "/nonexistent.json", "--dev", "rxe1"}, "/nonexistent.json: no such file"},
		{"missing view file", []string{"mpt", "import", "--mr", "/nonexistent.json", "--qp", "q", "--dev", "rxe1"}, "--mr: open /nonexistent.json"},
		{"not rdma output", []string{"mpt", "import", "--rdma-json", td + "rxe/read_atomic.mpt.json", "--dev", "rxe1"},
			`read_atomic.mpt.json:1:1: $: this is an MPT file, not rdma output: use it as it is (rocetap mpt check FILE)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, nil, tt.args...)
			if code != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %q", code, errOut, tt.want)
			}
		})
	}
}

func TestMPTCheck(t *testing.T) {
	out, errOut, code := run(t, nil, "mpt", "check", td+"rxe/send_inv.mpt.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := td + `rxe/send_inv.mpt.json: valid MPT file (version 1)
responder 10.77.0.2, profile rxe
PDs 1: 0
QPs 1
  0x000022 RC  pd 0  mtu 1024  access LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC  expected_psn 0x000400  remote 10.77.0.1/0x000022  max_dest_rd_atomic 4  min_rnr_timer 12  recv 4
MRs 2
  rkey 0x00001563 lkey 0x00001563  [0x0000555555578000, +8192)  pd 0  LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC|MW_BIND
  rkey 0x00000000 lkey 0x00001649  [0x000055555557b000, +4096)  pd 0  LOCAL_WRITE
MWs 1
  rkey 0x0800019c type 2  [0x0000555555578000, +4096)  pd 0  REMOTE_WRITE|REMOTE_READ  on MR 0x00001563  QP 0x000022
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	// Every Soft-RoCE MPT file is valid; from stdin too.
	files, _ := filepath.Glob(td + "rxe/*.mpt.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, code := run(t, data, "mpt", "check", "-")
		if code != 0 || !strings.HasPrefix(out, "<stdin>: valid MPT file") {
			t.Errorf("%s: exit %d: %s", f, code, errOut)
		}
	}
	// A never-connected QP is said to drop everything.
	out, _, _ = run(t, nil, "mpt", "check", td+"rxe/err_retry_exc.mpt.json")
	if !strings.Contains(out, "(no remote and no expected_psn: never reached RTR, drops every packet)") {
		t.Errorf("err_retry_exc: %s", out)
	}
}

func TestMPTCheckErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.mpt.json")
	data, err := os.ReadFile(td + "rxe/read_atomic.mpt.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, bytes.Replace(data, []byte(`"min_rnr_timer"`), []byte(`"min_rnr_timr"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"invalid", []string{"mpt", "check", bad}, ExitInput, bad + `:26:4: $.qps[0].min_rnr_timr: unknown key "min_rnr_timr" (allowed: qpn, pd, type, access, mtu, expected_psn, rq_depth, max_dest_rd_atomic, min_rnr_timer, q_key, remote, recv); did you mean "min_rnr_timer"?`},
		{"invalid stdin", []string{"mpt", "check", "-"}, ExitInput, "<stdin>: empty file"},
		{"missing", []string{"mpt", "check", filepath.Join(dir, "none.json")}, 1, "cannot read the MPT file: open " + filepath.Join(dir, "none.json")},
		{"no argument", []string{"mpt", "check"}, 1, "want one MPT file (rocetap mpt check FILE), got 0 arguments"},
		{"unknown subcommand", []string{"mpt", "lern"}, 1, `unknown command "lern" for "rocetap mpt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, nil, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestMPTFlags parses the flags of each subcommand into its options.
func TestMPTFlags(t *testing.T) {
	ios := IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	var lo *MPTLearnOptions
	cmd := newCmdMPTLearn(ios, func(o *MPTLearnOptions) error { lo = o; return nil })
	cmd.SetArgs([]string{"-r", "x.pcap", "--responder", "fd77::2", "--profile", "rxe", "--trust-uc", "-o", "out.json", "-d", "udp.port==4792,infiniband"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := &MPTLearnOptions{readOptions: readOptions{Path: "x.pcap", Decode: []string{"udp.port==4792,infiniband"}},
		Responder: "fd77::2", Profile: "rxe", TrustUC: true, Out: "out.json"}
	if !reflect.DeepEqual(lo, want) {
		t.Errorf("learn options %+v, want %+v", lo, want)
	}

	var io *MPTImportOptions
	cmd = newCmdMPTImport(ios, func(o *MPTImportOptions) error { io = o; return nil })
	cmd.SetArgs([]string{"--rdma-json", "r.json", "--snapshot", "after", "--dev", "rxe1", "--pid", "974", "--responder", "10.77.0.2",
		"--qp-access", "", "--va", "9d2=0x1000", "--va", "a=4096", "--mr-access", "9d2=REMOTE_READ", "--remote-mrs-only", "--mtu", "4096"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !io.HasQPAcc || io.QPAccess != "" || io.PID != 974 || len(io.VA) != 2 || !io.RemoteOnly || io.Snapshot != "after" {
		t.Errorf("import options %+v", io)
	}
	sel, err := io.selection()
	if err != nil {
		t.Fatal(err)
	}
	wantMRs := map[uint32]mpt.RdmaMR{0x9d2: {VA: 0x1000, HasVA: true, Access: hca.RemoteRead, HasAccess: true}, 0xa: {VA: 4096, HasVA: true}}
	if !sel.HasQPAccess || sel.QPAccess != 0 || !reflect.DeepEqual(sel.MRs, wantMRs) || sel.MTU != 4096 || sel.Responder.String() != "10.77.0.2" {
		t.Errorf("selection %+v", sel)
	}

	var co *MPTCheckOptions
	cmd = newCmdMPTCheck(ios, func(o *MPTCheckOptions) error { co = o; return nil })
	cmd.SetArgs([]string{"f.json"})
	if err := cmd.Execute(); err != nil || co.Path != "f.json" {
		t.Errorf("check: %v %+v", err, co)
	}
}

// TestMPTCheckMRLine: mpt check's MR line, written without fmt, is what
// the format string it replaced prints.
func TestMPTCheckMRLine(t *testing.T) {
	for _, m := range []hca.MRConfig{
		{},
		{RKey: 0x1234, LKey: 0x9d2, VA: 0x7f3a5c000000, Length: 65536, PD: 1, Access: hca.LocalWrite | hca.RemoteRead},
		{RKey: 0xffffffff, LKey: 0x80000000, VA: ^uint64(0), Length: ^uint64(0), PD: 0xffffffff, Access: hca.ZeroBased},
		{RKey: 1, LKey: 0x10, VA: 0x100, Length: 1},
	} {
		want := fmt.Sprintf("  rkey %#08x lkey %#08x  [%#016x, +%d)  pd %d  %s\n", m.RKey, m.LKey, m.VA, m.Length, m.PD, m.Access)
		if got := string(appendMRLine(nil, &m, m.Access.String())); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}
