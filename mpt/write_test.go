package mpt

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// TestWriteMPTRoundTrip parses every Soft-RoCE MPT file, writes it and
// parses the output: the two parses must be equal, and writing again must
// give the same bytes.
func TestWriteMPTRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../testdata/rxe/*.mpt.json")
	if err != nil || len(files) != 25 {
		t.Fatalf("want 25 MPT files, found %d (%v)", len(files), err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Parse("written", out)
			if err != nil {
				t.Fatalf("the written file does not parse: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(f, g) {
				t.Errorf("round trip differs:\nread    %+v\nwritten %+v\n%s", f, g, out)
			}
			again, err := Marshal(g)
			if err != nil || !bytes.Equal(out, again) {
				t.Errorf("writing the round-tripped file gives other bytes (%v)", err)
			}
		})
	}
}

// TestWriteMPTDocExample writes the example of docs/mpt-format.md and
// must get it back byte for byte: the writer lays files out as the
// documentation shows them.
func TestWriteMPTDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/mpt-format.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```json\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/mpt-format.md has no ```json example")
	}
	f, err := Parse("mpt-format.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != example {
		t.Errorf("written:\n%s\ndocumented:\n%s", out, example)
	}
}

func TestWriteMPTLayout(t *testing.T) {
	at := time.Unix(1795320179, 865224000).UTC()
	base := func() *File {
		return &File{Version: 1, Profile: "ibta", Config: hca.Config{Responder: decode.MustParseNode("fd77::2"),
			PDs: []hca.PDConfig{{ID: 0}},
			QPs: []hca.QPConfig{{QPN: 0x2f, PD: 0, Type: decode.TransportUD, MTU: 1024, QKey: 0x11111111, HasQKey: true}}}}
	}
	tests := []struct {
		name string
		edit func(f *File)
		want string
	}{
		{"minimal", func(f *File) {}, `{
  "version": 1,
  "responder": { "address": "fd77::2" },
  "pds": [ { "id": 0 } ],
  "qps": [
    {
      "qpn": "0x00002f",
      "pd": 0,
      "type": "UD",
      "access": [],
      "mtu": 1024,
      "q_key": "0x11111111"
    }
  ],
  "mrs": []
}
`},
		{"empty recv, no QPs' optional keys", func(f *File) {
			f.QPs[0] = hca.QPConfig{QPN: 2, Type: decode.TransportRC, Access: hca.RemoteRead, MTU: 4096, HasRecv: true, Recv: []hca.RecvWQE{}}
		}, `{
  "version": 1,
  "responder": { "address": "fd77::2" },
  "pds": [ { "id": 0 } ],
  "qps": [
    {
      "qpn": "0x000002",
      "pd": 0,
      "type": "RC",
      "access": ["REMOTE_READ"],
      "mtu": 4096,
      "recv": []
    }
  ],
  "mrs": []
}
`},
		{"long recv list, one per line", func(f *File) {
			f.QPs[0] = hca.QPConfig{QPN: 2, Type: decode.TransportRC, MTU: 1024, HasRecv: true, Recv: []hca.RecvWQE{
				{Length: 512, PostedAt: at, HasPostedAt: true}, {Length: 4096, PostedAt: at.Add(time.Second), HasPostedAt: true},
				{Length: 1}}}
		}, `{
  "version": 1,
  "responder": { "address": "fd77::2" },
  "pds": [ { "id": 0 } ],
  "qps": [
    {
      "qpn": "0x000002",
      "pd": 0,
      "type": "RC",
      "access": [],
      "mtu": 1024,
      "recv": [
        { "length": 512, "posted_at": 1795320179.865224 },
        { "length": 4096, "posted_at": 1795320180.865224 },
        { "length": 1 }
      ]
    }
  ],
  "mrs": []
}
`},
		{"LID responder and peer", func(f *File) {
			f.Responder = decode.NodeLID(2)
			f.QPs = []hca.QPConfig{{QPN: 0x49, Type: decode.TransportRC, MTU: 256, Remote: &hca.Peer{Addr: decode.NodeLID(0xc001), QPN: 0x48}}}
		}, `{
  "version": 1,
  "responder": { "address": "lid:2" },
  "pds": [ { "id": 0 } ],
  "qps": [
    {
      "qpn": "0x000049",
      "pd": 0,
      "type": "RC",
      "access": [],
      "mtu": 256,
      "remote": { "address": "lid:49153", "qpn": "0x000048" }
    }
  ],
  "mrs": []
}
`},
		{"IPv4-mapped responder, type 1 window, no QPs", func(f *File) {
			f.Responder = decode.NodeAddr(netip.MustParseAddr("::ffff:10.77.0.2"))
			f.QPs = nil
			f.MRs = []hca.MRConfig{{RKey: 0x1234, LKey: 0x1234, VA: 0x7f0000001000, Length: 8192, Access: hca.LocalWrite | hca.MWBind}}
			f.MWs = []hca.MWConfig{{RKey: 0x4321, Type: 1, VA: 0x7f0000001000, Length: 4096, Access: hca.RemoteRead, MRRKey: 0x1234}}
		}, `{
  "version": 1,
  "responder": { "address": "10.77.0.2" },
  "pds": [ { "id": 0 } ],
  "qps": [],
  "mrs": [
    {
      "rkey": "0x00001234",
      "lkey": "0x00001234",
      "va": "0x00007f0000001000",
      "length": 8192,
      "pd": 0,
      "access": ["LOCAL_WRITE", "MW_BIND"]
    }
  ],
  "mws": [
    {
      "rkey": "0x00004321",
      "type": 1,
      "va": "0x00007f0000001000",
      "length": 4096,
      "pd": 0,
      "access": ["REMOTE_READ"],
      "mr_rkey": "0x00001234"
    }
  ]
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := base()
			tt.edit(f)
			out, err := Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, tt.want)
			}
			g, err := Parse("written", out)
			if err != nil {
				t.Fatal(err)
			}
			if f.Profile == "" {
				f.Profile = "ibta"
			}
			if !reflect.DeepEqual(f, g) {
				t.Errorf("round trip differs:\nwrote %+v\nread  %+v", f, g)
			}
		})
	}
}

func TestWriteMPTErrors(t *testing.T) {
	ok := func() *File {
		return &File{Version: 1, Config: hca.Config{Responder: decode.MustParseNode("10.0.0.1"), PDs: []hca.PDConfig{{}},
			QPs: []hca.QPConfig{{QPN: 2, Type: decode.TransportRC, MTU: 1024}}}}
	}
	tests := []struct {
		name string
		edit func(f *File)
		want string
	}{
		{"no responder", func(f *File) { f.Responder = decode.Node{} }, "no responder address"},
		{"version", func(f *File) { f.Version = 2 }, "version 2"},
		{"unnamed access", func(f *File) { f.QPs[0].Access = 1 << 20 }, "qps[0]: access bits 0x100000 have no name"},
		{"remote without address", func(f *File) { f.QPs[0].Remote = &hca.Peer{QPN: 2} }, "qps[0].remote address"},
		{"receive before 1970", func(f *File) {
			f.QPs[0].HasRecv, f.QPs[0].Recv = true, []hca.RecvWQE{{PostedAt: time.Unix(-5, 0), HasPostedAt: true}}
		}, "qps[0].recv[0]: posted_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ok()
			tt.edit(f)
			_, err := Marshal(f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := Marshal(nil); err == nil {
		t.Error("Marshal(nil) succeeded")
	}
	var buf bytes.Buffer
	if err := Write(&buf, ok()); err != nil || !strings.HasPrefix(buf.String(), "{\n  \"version\": 1,") {
		t.Errorf("Write: %v\n%s", err, buf.String())
	}
}
