package mpt

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

func loadMPTOrFail(t *testing.T, name string) *File {
	t.Helper()
	f, err := Load(filepath.Join("..", "testdata", "rxe", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMPTRxeFiles loads every Soft-RoCE MPT file and compares it with an
// independent decoding of the same JSON (encoding/json into maps, with the
// verbs bit values written out here rather than taken from access.go).
func TestMPTRxeFiles(t *testing.T) {
	files, err := filepath.Glob("../testdata/rxe/*.mpt.json")
	if err != nil || len(files) != 25 {
		t.Fatalf("want 25 MPT files, found %d (%v)", len(files), err)
	}
	verbs := map[string]hca.Access{"LOCAL_WRITE": 1, "REMOTE_WRITE": 2, "REMOTE_READ": 4,
		"REMOTE_ATOMIC": 8, "MW_BIND": 16, "ZERO_BASED": 32, "ON_DEMAND": 64}
	num := func(t *testing.T, v any) uint64 {
		t.Helper()
		s := v.(string)
		n, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
		if !strings.HasPrefix(s, "0x") {
			n, err = strconv.ParseUint(s, 10, 64)
		}
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	bits := func(names any) hca.Access {
		var a hca.Access
		for _, n := range names.([]any) {
			a |= verbs[n.(string)]
		}
		return a
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			var raw struct {
				PDs, QPs, MRs, MWs []map[string]any
			}
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			if len(f.PDs) != len(raw.PDs) || len(f.QPs) != len(raw.QPs) || len(f.MRs) != len(raw.MRs) || len(f.MWs) != len(raw.MWs) {
				t.Fatalf("counts pds/qps/mrs/mws = %d/%d/%d/%d, file has %d/%d/%d/%d",
					len(f.PDs), len(f.QPs), len(f.MRs), len(f.MWs), len(raw.PDs), len(raw.QPs), len(raw.MRs), len(raw.MWs))
			}
			if f.Version != 1 || f.Profile != "rxe" || !f.Responder.IsValid() {
				t.Errorf("version %d profile %q responder %v", f.Version, f.Profile, f.Responder)
			}
			for i, r := range raw.MRs {
				mr := f.MRs[i]
				if uint64(mr.RKey) != num(t, r["rkey"]) || uint64(mr.LKey) != num(t, r["lkey"]) || mr.VA != num(t, r["va"]) ||
					mr.Length != uint64(r["length"].(float64)) || mr.PD != uint32(r["pd"].(float64)) {
					t.Errorf("mrs[%d] = %+v, file has %v", i, mr, r)
				}
				if want := bits(r["access"]); mr.Access != want {
					t.Errorf("mrs[%d].access = %v, want %v", i, mr.Access, want)
				}
				// String and AccessByName agree with the parsed bits.
				var back hca.Access
				for _, n := range strings.Split(mr.Access.String(), "|") {
					a, ok := hca.AccessByName(n)
					if !ok {
						t.Errorf("mrs[%d]: %q from String() is not a known name", i, n)
					}
					back |= a
				}
				if back != mr.Access {
					t.Errorf("mrs[%d]: %v does not round-trip through String (%v)", i, mr.Access, back)
				}
			}
			for i, r := range raw.QPs {
				qp := f.QPs[i]
				if uint64(qp.QPN) != num(t, r["qpn"]) || qp.Type.String() != r["type"] || qp.Access != bits(r["access"]) ||
					qp.MTU != int(r["mtu"].(float64)) {
					t.Errorf("qps[%d] = %+v, file has %v", i, qp, r)
				}
				_, hasPSN := r["expected_psn"]
				_, hasRecv := r["recv"]
				if qp.HasExpectedPSN != hasPSN || qp.HasRecv != hasRecv || (qp.Remote != nil) != (r["remote"] != nil) {
					t.Errorf("qps[%d]: optional keys present in the file do not match the Has* fields", i)
				}
				if hasRecv && len(qp.Recv) != len(r["recv"].([]any)) {
					t.Errorf("qps[%d]: %d receives, file has %d", i, len(qp.Recv), len(r["recv"].([]any)))
				}
			}
		})
	}
}

func TestMPTValues(t *testing.T) {
	f := loadMPTOrFail(t, "send_inv.mpt.json")
	qp := f.QPs[0]
	if qp.QPN != 0x22 || qp.PD != 0 || qp.ExpectedPSN != 0x400 || qp.MaxDestRdAtomic != 4 || qp.MinRNRTimer != 12 ||
		qp.Remote == nil || qp.Remote.Addr != decode.MustParseNode("10.77.0.1") || qp.Remote.QPN != 0x22 {
		t.Errorf("send_inv qps[0] = %+v", qp)
	}
	// posted_at is exact to the microsecond, which a float64 is not.
	if got, want := qp.Recv[0].PostedAt, time.Unix(1795320158, 770397000); !got.Equal(want) || !qp.Recv[0].HasPostedAt || qp.Recv[0].Length != 4096 {
		t.Errorf("recv[0] = %+v, want posted at %v", qp.Recv[0], want)
	}
	if mr := f.MRs[0]; mr.RKey != 0x1563 || mr.VA != 0x0000555555578000 || mr.Length != 8192 ||
		mr.Access != hca.LocalWrite|hca.RemoteWrite|hca.RemoteRead|hca.RemoteAtomic|hca.MWBind {
		t.Errorf("send_inv mrs[0] = %+v", mr)
	}
	if mr := f.MRs[1]; mr.RKey != 0 || mr.LKey != 0x1649 || mr.Access != hca.LocalWrite {
		t.Errorf("send_inv mrs[1] = %+v", mr)
	}
	want := hca.MWConfig{RKey: 0x0800019c, Type: 2, VA: 0x0000555555578000, Length: 4096, PD: 0,
		Access: hca.RemoteWrite | hca.RemoteRead, MRRKey: 0x1563, QPN: 0x22, HasQPN: true}
	if f.MWs[0] != want {
		t.Errorf("send_inv mws[0] = %+v, want %+v", f.MWs[0], want)
	}

	f = loadMPTOrFail(t, "ipv6_mix.mpt.json")
	if f.Responder != decode.MustParseNode("fd77::2") || len(f.QPs) != 2 || len(f.MRs) != 3 {
		t.Errorf("ipv6_mix: responder %v, %d qps, %d mrs", f.Responder, len(f.QPs), len(f.MRs))
	}
	if ud := f.QPs[1]; ud.Type != decode.TransportUD || !ud.HasQKey || ud.QKey != 0x11111111 || ud.Access != 0 || ud.Remote != nil || ud.HasExpectedPSN {
		t.Errorf("ipv6_mix UD qp = %+v", ud)
	}

	f = loadMPTOrFail(t, "err_retry_exc.mpt.json")
	if qp := f.QPs[0]; !qp.HasRecv || qp.Recv == nil || len(qp.Recv) != 0 || qp.HasExpectedPSN || qp.Remote != nil || qp.HasMinRNRTimer {
		t.Errorf("err_retry_exc qp (INIT, empty recv) = %+v", qp)
	}

	f = loadMPTOrFail(t, "pt_read.mpt.json")
	if qp := f.QPs[0]; qp.HasRecv || qp.ExpectedPSN != 0xc23c06 || qp.MaxDestRdAtomic != 128 || qp.PD != 5 {
		t.Errorf("pt_read qps[0] = %+v", qp)
	}
	if len(f.PDs) != 2 || f.PDs[1].ID != 6 || f.MRs[1].RKey != 0x83c {
		t.Errorf("pt_read pds %v mrs[1] %+v", f.PDs, f.MRs[1])
	}
}

// baseExample is the example of the format document, with every optional key.
const baseExample = `{
  "version": 1,
  "responder": { "address": "10.77.0.2" },
  "profile": "rxe",
  "pds": [ { "id": 1 }, { "id": 2 } ],
  "qps": [
    {
      "qpn": "0x000011",
      "pd": 1,
      "type": "RC",
      "access": ["REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"],
      "mtu": 1024,
      "expected_psn": "0x3c1a2b",
      "rq_depth": 64,
      "max_dest_rd_atomic": 16,
      "min_rnr_timer": 12,
      "remote": { "address": "10.77.0.1", "qpn": "0x000012" },
      "recv": [ { "length": 4096 }, { "length": 512, "posted_at": 1763779200.031 } ]
    },
    { "qpn": 34, "pd": 2, "type": "UD", "access": [], "mtu": 4096, "q_key": "0x11111111" }
  ],
  "mrs": [
    {
      "rkey": "0x00001234",
      "lkey": "0x00001234",
      "va": "0x00007f3a5c000000",
      "length": 65536,
      "pd": 1,
      "access": ["LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "MW_BIND"]
    },
    { "rkey": 0, "lkey": "0x00000777", "va": "0x1000", "length": 4096, "pd": 2, "access": ["LOCAL_WRITE"] },
    { "rkey": 0, "lkey": "0x00000778", "va": "0x2000", "length": 4096, "pd": 2, "access": ["LOCAL_WRITE"] }
  ],
  "mws": [
    {
      "rkey": "0x080001dc",
      "type": 2,
      "va": "0x00007f3a5c001000",
      "length": 4096,
      "pd": 1,
      "access": ["REMOTE_WRITE", "REMOTE_READ"],
      "mr_rkey": "0x00001234",
      "qpn": "0x000011"
    }
  ]
}`

func TestMPTBase(t *testing.T) {
	f, err := Parse("base.json", []byte(baseExample))
	if err != nil {
		t.Fatal(err)
	}
	qp := f.QPs[0]
	if !qp.HasRQDepth || qp.RQDepth != 64 || qp.MaxDestRdAtomic != 16 || qp.Recv[0].HasPostedAt ||
		!qp.Recv[1].PostedAt.Equal(time.Unix(1763779200, 31000000)) {
		t.Errorf("qps[0] = %+v", qp)
	}
	if f.QPs[1].QPN != 34 || f.QPs[1].MTU != 4096 {
		t.Errorf("qps[1] = %+v", f.QPs[1])
	}
}

func TestMPTOptionalAndForms(t *testing.T) {
	for _, tc := range []struct{ name, old, new string }{
		{"no profile", `"profile": "rxe",`, ``},
		{"no mws", "", ""}, // cut below
		{"decimal string", `"qpn": "0x000011",`, `"qpn": "17",`},
		{"upper 0X", `"lkey": "0x00001234"`, `"lkey": "0X00001234"`},
		{"IPv4-mapped GID", `"address": "10.77.0.2"`, `"address": "::ffff:10.77.0.2"`},
		{"GID", `"address": "10.77.0.2"`, `"address": "fe80::a:4dff:fe00:2"`},
		{"LID", `"address": "10.77.0.2"`, `"address": "lid:2"`},
		{"hex LID", `"address": "10.77.0.2"`, `"address": "LID:0xc001"`},
		{"remote LID", `"address": "10.77.0.1"`, `"address": "lid:1"`},
		{"type 1 MW", `"type": 2,`, `"type": 1,`},
		{"max VA", `"va": "0x2000", "length": 4096`, `"va": "0xfffffffffffff000", "length": 4096`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := baseExample
			if tc.old != "" {
				if strings.Count(src, tc.old) != 1 {
					t.Fatalf("edit %q matches the base %d times, want once", tc.old, strings.Count(src, tc.old))
				}
				src = strings.Replace(src, tc.old, tc.new, 1)
			}
			switch tc.name {
			case "no mws":
				src = baseExample[:strings.Index(baseExample, `,
  "mws"`)] + "\n}"
			case "type 1 MW":
				src = strings.Replace(src, `,
      "qpn": "0x000011"
    }
  ]
}`, "}]}", 1)
			}
			f, err := Parse("x.json", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			switch tc.name {
			case "no profile":
				if f.Profile != "ibta" {
					t.Errorf("default profile %q, want ibta", f.Profile)
				}
			case "no mws":
				if len(f.MWs) != 0 {
					t.Errorf("mws = %v", f.MWs)
				}
			case "decimal string":
				if f.QPs[0].QPN != 17 {
					t.Errorf("qpn %d", f.QPs[0].QPN)
				}
			case "upper 0X":
				if f.MRs[0].LKey != 0x1234 {
					t.Errorf("lkey %#x", f.MRs[0].LKey)
				}
			case "max VA":
				if f.MRs[2].VA != 0xfffffffffffff000 {
					t.Errorf("va %#x", f.MRs[2].VA)
				}
			case "GID":
				if f.Responder != decode.MustParseNode("fe80::a:4dff:fe00:2") {
					t.Errorf("responder %v", f.Responder)
				}
			case "LID", "hex LID":
				if want := map[string]uint16{"LID": 2, "hex LID": 0xc001}[tc.name]; f.Responder != decode.NodeLID(want) {
					t.Errorf("responder %v, want lid:%d", f.Responder, want)
				}
			case "remote LID":
				if f.QPs[0].Remote.Addr != decode.NodeLID(1) {
					t.Errorf("remote %v", f.QPs[0].Remote.Addr)
				}
			case "IPv4-mapped GID":
				if f.Responder != decode.MustParseNode("10.77.0.2") {
					t.Errorf("responder %v, want it unmapped", f.Responder)
				}
			case "type 1 MW":
				if f.MWs[0].Type != 1 || f.MWs[0].HasQPN {
					t.Errorf("mw %+v", f.MWs[0])
				}
			}
		})
	}
}

func TestMPTErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string // edit of baseExample; old "" means new is the whole file
		path     string // JSON path the error must name ("" for none)
		want     string // and the reason
		line     int    // 0: not checked
	}{
		// JSON itself
		{"empty", "", "  \n", "", "empty file", 0},
		{"syntax", `"rq_depth": 64,`, `"rq_depth": 64,,`, "", "JSON syntax error: invalid character ','", 14},
		{"truncated", "", `{"version": 1, "pds": [`, "", "unexpected end of file", 1},
		{"trailing data", "", `{"version": 1} {}`, "", "data after the top-level object", 1},
		{"not an object", "", `[1]`, "$", "want an object, found an array", 1},
		{"duplicate key", `"mtu": 1024,`, `"mtu": 1024, "mtu": 2048,`, "$.qps[0].mtu", `key "mtu" appears twice`, 12},
		{"too deep", "", strings.Repeat("[", 100), "$" + strings.Repeat("[0]", 32), "nested more than 32 deep", 1},
		// unknown and missing keys, at each level
		{"unknown top key", `"profile": "rxe",`, `"profile": "rxe", "comment": "x",`, "$.comment", `unknown key "comment" (allowed: version, responder, profile, pds, qps, mrs, mws)`, 4},
		{"unknown responder key", `{ "address": "10.77.0.2" }`, `{ "address": "10.77.0.2", "gid": 3 }`, "$.responder.gid", `unknown key "gid" (allowed: address)`, 0},
		{"unknown pd key", `{ "id": 2 }`, `{ "id": 2, "name": "x" }`, "$.pds[1].name", `unknown key "name"`, 0},
		{"qp typo", `"min_rnr_timer": 12`, `"min_rnr_timr": 12`, "$.qps[0].min_rnr_timr", `did you mean "min_rnr_timer"?`, 16},
		{"unknown remote key", `"qpn": "0x000012" }`, `"qpn": "0x000012", "psn": 1 }`, "$.qps[0].remote.psn", `unknown key "psn" (allowed: address, qpn)`, 0},
		{"unknown recv key", `{ "length": 4096 }`, `{ "length": 4096, "lkey": 1 }`, "$.qps[0].recv[0].lkey", `unknown key "lkey" (allowed: length, posted_at)`, 0},
		{"mr typo", `"lkey": "0x00001234",`, `"lkey": "0x00001234", "rkye": 1,`, "$.mrs[0].rkye", `did you mean "rkey"?`, 0},
		{"unknown mw key", `"mr_rkey": "0x00001234",`, `"mr_rkey": "0x00001234", "mr": 0,`, "$.mws[0].mr", `unknown key "mr"`, 0},
		{"missing version", `"version": 1,`, ``, "$.version", "missing; the file needs version, responder, pds, qps, mrs", 1},
		{"missing mrs", "", `{"version": 1, "responder": {"address": "10.77.0.2"}, "pds": [], "qps": []}`, "$.mrs", "missing; the file needs", 1},
		{"missing pds", "", `{"version": 1, "responder": {"address": "10.77.0.2"}, "qps": [], "mrs": []}`, "$.pds", "missing; the file needs", 1},
		{"missing address", `{ "address": "10.77.0.2" }`, `{}`, "$.responder.address", "missing", 0},
		{"missing pd id", `{ "id": 2 }`, `{}`, "$.pds[1].id", "missing; a PD needs id", 0},
		{"missing mtu", `"mtu": 4096, `, ``, "$.qps[1].mtu", "missing; a QP needs qpn, pd, type, access, mtu", 0},
		{"missing remote qpn", `, "qpn": "0x000012" }`, ` }`, "$.qps[0].remote.qpn", "missing", 0},
		{"missing recv length", `{ "length": 4096 }`, `{ "posted_at": 1 }`, "$.qps[0].recv[0].length", "missing; a receive needs length", 0},
		{"missing lkey", `"lkey": "0x00001234",`, ``, "$.mrs[0].lkey", "missing; an MR needs rkey, lkey, va, length, pd, access", 0},
		{"missing mr_rkey", `"mr_rkey": "0x00001234",`, ``, "$.mws[0].mr_rkey", "missing; an MW needs", 0},
		// types and values
		{"version 2", `"version": 1`, `"version": 2`, "$.version", "version 2 is not supported", 2},
		{"version string", `"version": 1`, `"version": "one"`, "$.version", `"one" is not an integer`, 0},
		{"bad address", `"address": "10.77.0.2"`, `"address": "10.77.0.256"`, "$.responder.address", `"10.77.0.256" is not an IPv4 address, IPv6 address or GID`, 3},
		{"zone", `"address": "10.77.0.2"`, `"address": "fe80::2%eth0"`, "$.responder.address", "has a zone", 0},
		{"LID 0", `"address": "10.77.0.2"`, `"address": "lid:0"`, "$.responder.address", `"lid:0" is not a LID: write a number from 1 to 65535 (0xffff), in decimal or 0x hex (e.g. "lid:1" or "lid:0x1")`, 3},
		{"LID 17 bits", `"address": "10.77.0.1"`, `"address": "lid:0x10000"`, "$.qps[0].remote.address", `"lid:0x10000" is not a LID`, 0},
		{"LID name", `"address": "10.77.0.2"`, `"address": "node2"`, "$.responder.address", `"node2" is not an IPv4 address, IPv6 address or GID, or a LID (e.g. "10.77.0.2", "fe80::2" or "lid:1")`, 3},
		{"address number", `"address": "10.77.0.1"`, `"address": 7`, "$.qps[0].remote.address", "want a string, found the number 7", 0},
		{"empty profile", `"profile": "rxe"`, `"profile": ""`, "$.profile", "leave the key out", 0},
		{"pds not array", `"pds": [ { "id": 1 }, { "id": 2 } ]`, `"pds": { "id": 1 }`, "$.pds", "want an array, found an object", 0},
		{"qpn 25 bits", `"qpn": "0x000011",`, `"qpn": "0x1000011",`, "$.qps[0].qpn", `0x1000011 does not fit 24 bits (QPNs are 24-bit, e.g. "0x000011")`, 8},
		{"psn 25 bits", `"expected_psn": "0x3c1a2b"`, `"expected_psn": 16777216`, "$.qps[0].expected_psn", "16777216 does not fit 24 bits (PSNs are 24-bit", 0},
		{"remote qpn 25 bits", `"qpn": "0x000012"`, `"qpn": "0xfffffff"`, "$.qps[0].remote.qpn", "does not fit 24 bits", 0},
		{"rkey 33 bits", `"rkey": "0x00001234"`, `"rkey": "0x1234567890"`, "$.mrs[0].rkey", `0x1234567890 does not fit 32 bits (keys are 32-bit, e.g. "0x00001234")`, 0},
		{"lkey 33 bits", `"lkey": "0x00000777"`, `"lkey": 4294967296`, "$.mrs[1].lkey", "4294967296 does not fit 32 bits", 0},
		{"q_key 33 bits", `"q_key": "0x11111111"`, `"q_key": "0x111111111"`, "$.qps[1].q_key", "does not fit 32 bits (Q_Keys", 0},
		{"min_rnr_timer 6 bits", `"min_rnr_timer": 12`, `"min_rnr_timer": 32`, "$.qps[0].min_rnr_timer", "32 does not fit 5 bits (min_rnr_timer is the 5-bit code", 0},
		{"max_dest_rd_atomic 9 bits", `"max_dest_rd_atomic": 16`, `"max_dest_rd_atomic": 256`, "$.qps[0].max_dest_rd_atomic", "does not fit 8 bits", 0},
		{"va 65 bits", `"va": "0x00007f3a5c000000"`, `"va": "0x10000000000000000"`, "$.mrs[0].va", "0x10000000000000000 does not fit 64 bits", 0},
		{"va decimal 65 bits", `"va": "0x00007f3a5c000000"`, `"va": 18446744073709551616`, "$.mrs[0].va", "18446744073709551616 does not fit 64 bits", 0},
		{"negative", `"length": 65536`, `"length": -1`, "$.mrs[0].length", "-1 is negative", 0},
		{"fraction", `"length": 65536`, `"length": 1.5`, "$.mrs[0].length", "1.5 is not an integer", 0},
		{"exponent", `"length": 65536`, `"length": 1e3`, "$.mrs[0].length", "1e3 is not an integer", 0},
		{"bad hex", `"rkey": "0x00001234"`, `"rkey": "0x12g4"`, "$.mrs[0].rkey", `"0x12g4" is not an integer (write a JSON number or a string in decimal or 0x hex`, 0},
		{"bool int", `"rq_depth": 64`, `"rq_depth": true`, "$.qps[0].rq_depth", "want an integer, found true/false", 0},
		{"null int", `"rq_depth": 64`, `"rq_depth": null`, "$.qps[0].rq_depth", "want an integer, found null", 0},
		{"va wraps", `"va": "0x2000", "length": 4096`, `"va": "0xfffffffffffff001", "length": 4096`, "$.mrs[2].length", "wraps past 2^64", 0},
		{"zero based va", `"access": ["LOCAL_WRITE"] },
    { "rkey": 0, "lkey": "0x00000778"`, `"access": ["LOCAL_WRITE", "ZERO_BASED"] },
    { "rkey": 0, "lkey": "0x00000778"`, "$.mrs[1].va", "with ZERO_BASED; a zero-based MR starts at va 0", 0},
		{"mtu 1500", `"mtu": 1024`, `"mtu": 1500`, "$.qps[0].mtu", "1500 is not an InfiniBand MTU (256, 512, 1024, 2048 or 4096); this looks like an Ethernet MTU", 0},
		{"mtu 300", `"mtu": 1024`, `"mtu": 300`, "$.qps[0].mtu", "300 is not an InfiniBand MTU", 0},
		{"qp type", `"type": "RC"`, `"type": "RD"`, "$.qps[0].type", `unknown QP type "RD" (known: RC, UC, UD, XRC)`, 0},
		{"qp type case", `"type": "RC"`, `"type": "rc"`, "$.qps[0].type", `write "RC", in capitals`, 0},
		{"access name", `"REMOTE_ATOMIC"]`, `"REMOTE_ATOMIK"]`, "$.qps[0].access[2]", `unknown access flag "REMOTE_ATOMIK" (known: LOCAL_WRITE, REMOTE_WRITE`, 0},
		{"access prefix", `["LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "MW_BIND"]`, `["IBV_ACCESS_LOCAL_WRITE"]`, "$.mrs[0].access[0]", `write "LOCAL_WRITE", without the IBV_ACCESS_ prefix`, 0},
		{"access not array", `"access": [],`, `"access": "LOCAL_WRITE",`, "$.qps[1].access", "want an array", 0},
		{"access number", `"access": [],`, `"access": [4],`, "$.qps[1].access[0]", "want a string, found the number 4", 0},
		{"posted_at string", `"posted_at": 1763779200.031`, `"posted_at": "now"`, "$.qps[0].recv[1].posted_at", "want a number of seconds since the epoch", 0},
		{"posted_at negative", `"posted_at": 1763779200.031`, `"posted_at": -1`, "$.qps[0].recv[1].posted_at", "not a time in seconds", 0},
		{"posted_at order", `{ "length": 4096 }`, `{ "length": 4096, "posted_at": 1763779201 }`, "$.qps[0].recv[1].posted_at", "earlier than $.qps[0].recv[0].posted_at; list the receives in posting order", 0},
		{"mw type 3", `"type": 2,`, `"type": 3,`, "$.mws[0].type", "MW type 3 is unknown (1 or 2)", 0},
		// references and duplicates
		{"qp pd", `"pd": 1,
      "type": "RC"`, `"pd": 9,
      "type": "RC"`, "$.qps[0].pd", `PD 9 is not in $.pds (ids: 1, 2); add {"id": 9} to pds`, 0},
		{"mr pd", `"pd": 2, "access": ["LOCAL_WRITE"] },
    { "rkey": 0, "lkey": "0x00000778"`, `"pd": 3, "access": ["LOCAL_WRITE"] },
    { "rkey": 0, "lkey": "0x00000778"`, "$.mrs[1].pd", "PD 3 is not in $.pds", 0},
		{"mw pd", `"pd": 1,
      "access": ["REMOTE_WRITE", "REMOTE_READ"]`, `"pd": 7,
      "access": ["REMOTE_WRITE", "REMOTE_READ"]`, "$.mws[0].pd", "PD 7 is not in $.pds", 0},
		{"mw pd differs", `"pd": 1,
      "access": ["REMOTE_WRITE", "REMOTE_READ"]`, `"pd": 2,
      "access": ["REMOTE_WRITE", "REMOTE_READ"]`, "$.mws[0].pd", "PD 2 differs from PD 1 of its MR $.mrs[0]", 0},
		{"mw mr_rkey", `"mr_rkey": "0x00001234"`, `"mr_rkey": "0x00004321"`, "$.mws[0].mr_rkey", "no MR in $.mrs has rkey 0x00004321", 0},
		{"mw mr_rkey 0", `"mr_rkey": "0x00001234"`, `"mr_rkey": 0`, "$.mws[0].mr_rkey", "no MR in $.mrs has rkey 0x00000000", 0},
		{"mw mr without MW_BIND", `"REMOTE_READ", "MW_BIND"]`, `"REMOTE_READ"]`, "$.mws[0].mr_rkey", "$.mrs[0] (rkey 0x00001234) lacks MW_BIND", 0},
		{"mw outside mr", `"va": "0x00007f3a5c001000"`, `"va": "0x00007f3a5c00f800"`, "$.mws[0].va", "is not inside its MR $.mrs[0]", 0},
		{"mw qpn", `"qpn": "0x000011"
    }`, `"qpn": "0x000099"
    }`, "$.mws[0].qpn", "no QP in $.qps has QPN 0x000099", 0},
		{"mw qp pd", `"qpn": "0x000011"
    }`, `"qpn": 34
    }`, "$.mws[0].pd", "PD 1 differs from PD 2 of its QP $.qps[1]", 0},
		{"mw type 2 without qpn", `,
      "qpn": "0x000011"
    }`, `
    }`, "$.mws[0].qpn", "missing; a type 2 window is bound to a QP", 0},
		{"mw type 1 with qpn", `"type": 2,`, `"type": 1,`, "$.mws[0].qpn", "a type 1 window is bound to no QP; remove qpn or set type 2", 0},
		{"mw rkey 0", `"rkey": "0x080001dc"`, `"rkey": 0`, "$.mws[0].rkey", "nonzero rkey", 0},
		{"duplicate pd", `{ "id": 2 }`, `{ "id": 1 }`, "$.pds[1].id", "PD 1 is already $.pds[0]; PD ids must be unique", 0},
		{"duplicate qpn", `{ "qpn": 34,`, `{ "qpn": "0x11",`, "$.qps[1].qpn", "QPN 0x000011 is already $.qps[0]; QPNs must be unique", 0},
		{"duplicate mr rkey", `{ "rkey": 0, "lkey": "0x00000778"`, `{ "rkey": 4660, "lkey": "0x00000778"`, "$.mrs[2].rkey", "rkey 0x00001234 is also $.mrs[0].rkey; rkeys must be unique", 0},
		{"mw rkey = mr rkey", `"rkey": "0x080001dc"`, `"rkey": "0x00001234"`, "$.mws[0].rkey", "rkey 0x00001234 is also $.mrs[0].rkey", 0},
		{"duplicate lkey", `"lkey": "0x00000778"`, `"lkey": "0x00000777"`, "$.mrs[2].lkey", "lkey 0x00000777 is also $.mrs[1].lkey", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.new
			if tc.old != "" {
				if strings.Count(baseExample, tc.old) != 1 {
					t.Fatalf("edit %q matches the base %d times, want once", tc.old, strings.Count(baseExample, tc.old))
				}
				src = strings.Replace(baseExample, tc.old, tc.new, 1)
			}
			_, err := Parse("bad.mpt.json", []byte(src))
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("Parse: %v, want an *Error", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "bad.mpt.json") || me.File != "bad.mpt.json" {
				t.Errorf("error %q does not name the file", msg)
			}
			if me.Path != tc.path || (tc.path != "" && !strings.Contains(msg, tc.path+": ")) {
				t.Errorf("error %q: path %q, want %q", msg, me.Path, tc.path)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if tc.line != 0 && me.Line != tc.line {
				t.Errorf("error %q: line %d, want %d", msg, me.Line, tc.line)
			}
		})
	}
}

func TestMPTErrorFormat(t *testing.T) {
	e := &Error{File: "f.json", Path: "$.mrs[2].rkey", Msg: "bad"}
	if got := e.Error(); got != "f.json: $.mrs[2].rkey: bad" {
		t.Errorf("%q", got)
	}
	e.Line, e.Column = 3, 14
	if got := e.Error(); got != "f.json:3:14: $.mrs[2].rkey: bad" {
		t.Errorf("%q", got)
	}
	_, err := Parse("f.json", []byte("{\n  \"version\": 1,\n  \"responder\": 5, \"pds\": [], \"qps\": [], \"mrs\": []\n}"))
	if got := err.Error(); got != "f.json:3:16: $.responder: want an object, found the number 5" {
		t.Errorf("%q", got)
	}
}

// TestMPTErrorDocExamples checks the examples of docs/mpt-format.md.
func TestMPTErrorDocExamples(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{`"rkey": "0x00001234"`, `"rkey": "0x1234567890"`, `x.mpt.json:24:15: $.mrs[0].rkey: 0x1234567890 does not fit 32 bits (keys are 32-bit, e.g. "0x00001234")`},
		{`"min_rnr_timer": 12`, `"min_rnr_timr": 12`, `x.mpt.json:16:7: $.qps[0].min_rnr_timr: unknown key "min_rnr_timr" (allowed: qpn, pd, type, access, mtu, expected_psn, rq_depth, max_dest_rd_atomic, min_rnr_timer, q_key, remote, recv); did you mean "min_rnr_timer"?`},
		{`"rq_depth": 64,`, `"rq_depth": 64,,`, `x.mpt.json:14:22: JSON syntax error: invalid character ',' looking for beginning of object key string`},
	} {
		_, err := Parse("x.mpt.json", []byte(strings.Replace(baseExample, tc.old, tc.new, 1)))
		if err == nil || err.Error() != tc.want {
			t.Errorf("got  %v\nwant %s", err, tc.want)
		}
	}
}

func TestMPTLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// FuzzParse checks that no input panics and every failure is an
// *Error.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../testdata/rxe/*.mpt.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(baseExample))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("fuzz.json", data)
		var me *Error
		if err != nil && !errors.As(err, &me) {
			t.Fatalf("error %v is not an *Error", err)
		}
	})
}
