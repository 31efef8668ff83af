package decode

import "fmt"

// NFSv4 COMPOUND (RFC 7530, RFC 8881 for 4.1): the one procedure of NFS
// version 4 that does work, a list of operations.
//
//	call:  tag (utf8 opaque) | minorversion | count | {opcode, arguments}*
//	reply: status | tag | count | {opcode, status, results}*
//
// rocetap decodes the op codes and statuses, not every field: to reach op
// N it must step over the arguments (results) of ops 0..N-1, which the op
// table (nfs4Ops) describes for every op of NFSv4.0 (RFC 7530), 4.1 (RFC
// 8881), 4.2 (RFC 7862) and the extended attributes (RFC 8276). An unknown
// op, a union arm the XDR does not allow or bytes ending early stop the
// list, with an error (NFS4Compound.Complete is false). A reply stops at
// the first op that failed, as the server stops executing there.

// NFS program number and the COMPOUND procedure.
const (
	NFSProgram       = 100003
	NFS4ProcNull     = 0
	NFS4ProcCompound = 1
)

// NFS4Op is one operation of a COMPOUND: its code and, in a reply, its
// status.
type NFS4Op struct {
	Opcode    uint32
	Status    uint32
	HasStatus bool
	// Attrs counts the rdattr_error attributes in the op's results (a
	// READDIR entry's, a GETATTR's): NFS4Compound.AttrStatus holds them.
	Attrs int
}

// NFS4Compound is a decoded COMPOUND call or reply.
type NFS4Compound struct {
	Reply        bool
	Status       uint32 // reply: the COMPOUND's status
	Tag          []byte
	MinorVersion uint32 // call
	Count        uint32 // ops on the wire
	Have         int    // items present: 1 status (reply) / tag (call), 2 tag / minorversion, 3 count
	Ops          []NFS4Op
	Complete     bool // every op (and the last one's body) was decoded
	// AttrStatus are the rdattr_error attributes of the results and the
	// nfsstat4 values inside an op's arguments or results (TEST_STATEID's,
	// LAYOUTERROR's), op after op (tshark shows them among nfs.status).
	AttrStatus []uint32
}

// maxNFS4Ops bounds the ops decoded (Linux's nfsd accepts up to 200).
const maxNFS4Ops = 256

// DecodeCall decodes COMPOUND4args, reusing c.Ops.
func (c *NFS4Compound) DecodeCall(b []byte) error { return c.DecodeCallReduced(b, nil) }

// DecodeCallReduced decodes COMPOUND4args whose RPC-over-RDMA call moved
// data items to read chunks: reduced are the offsets in b, ascending,
// where such an item's bytes would be (the chunks' XDR positions, less
// the offset of b in the RPC message); the item's length word is in b,
// its bytes and padding are not.
func (c *NFS4Compound) DecodeCallReduced(b []byte, reduced []int) error {
	*c = NFS4Compound{Ops: c.Ops[:0], AttrStatus: c.AttrStatus[:0]}
	x := xdr{b: b, reduced: reduced}
	if c.Tag = x.opaque(); !x.ok() {
		return truncated("nfs", 4, len(b))
	}
	c.Have++
	if c.MinorVersion = x.u32(); !x.ok() {
		return truncated("nfs", x.off+4, len(b))
	}
	c.Have++
	if c.Count = x.u32(); !x.ok() {
		return truncated("nfs", x.off+4, len(b))
	}
	c.Have++
	return c.ops(&x, false)
}

// DecodeReply decodes COMPOUND4res, reusing c.Ops.
func (c *NFS4Compound) DecodeReply(b []byte) error { return c.DecodeReplyReduced(b, 0) }

// DecodeReplyReduced decodes COMPOUND4res whose RPC-over-RDMA reply moved
// its first ddp DDP-eligible data items (a READ's data, READLINK's link
// text: RFC 8267, 4.2) to write chunks: their length words are in b, their
// bytes and padding are not.
func (c *NFS4Compound) DecodeReplyReduced(b []byte, ddp int) error {
	*c = NFS4Compound{Reply: true, Ops: c.Ops[:0], AttrStatus: c.AttrStatus[:0]}
	x := xdr{b: b, ddp: ddp}
	if c.Status = x.u32(); !x.ok() {
		return truncated("nfs", 4, len(b))
	}
	c.Have++
	if c.Tag = x.opaque(); !x.ok() {
		return truncated("nfs", x.off+4, len(b))
	}
	c.Have++
	if c.Count = x.u32(); !x.ok() {
		return truncated("nfs", x.off+4, len(b))
	}
	c.Have++
	return c.ops(&x, true)
}

func (c *NFS4Compound) ops(x *xdr, reply bool) error {
	for i := uint32(0); i < c.Count; i++ {
		if len(c.Ops) == maxNFS4Ops {
			return fmt.Errorf("nfs: more than %d ops: %w", maxNFS4Ops, ErrMalformed)
		}
		op := NFS4Op{Opcode: x.u32()}
		if !x.ok() {
			return truncated("nfs", x.off+4, len(x.b))
		}
		if reply {
			op.Status = x.u32()
			if !x.ok() {
				c.Ops = append(c.Ops, op)
				return truncated("nfs", x.off+4, len(x.b))
			}
			op.HasStatus = true
		}
		c.Ops = append(c.Ops, op)
		if reply && op.Status != 0 {
			// The server stopped here; the op's error results (if any)
			// are not decoded.
			c.Complete = i+1 == c.Count
			return nil
		}
		desc, known := nfs4Ops[op.Opcode]
		skip := desc.arg
		if reply {
			skip = desc.res
		}
		switch {
		case reply && op.Opcode == 9: // GETATTR
			c.fattr(x)
		case reply && op.Opcode == 26: // READDIR
			x.skip(8)
			for x.ok() && x.u32() != 0 {
				x.skip(8)
				x.opaque()
				c.fattr(x)
			}
			x.skip(4)
		case !known:
			return fmt.Errorf("nfs: op %d of %d: unknown opcode %d: %w", i+1, c.Count, op.Opcode, ErrMalformed)
		default:
			x.status = c.AttrStatus
			skip(x)
			c.Ops[len(c.Ops)-1].Attrs += len(x.status) - len(c.AttrStatus)
			c.AttrStatus = x.status
		}
		if x.bad {
			return fmt.Errorf("nfs: op %d of %d (%s): a value its XDR does not allow: %w", i+1, c.Count, desc.name, ErrMalformed)
		}
		if !x.ok() {
			return truncated("nfs", x.off, len(x.b))
		}
	}
	c.Complete = true
	return nil
}

// fattr steps over a fattr4 in a reply, keeping its rdattr_error
// attribute (11) when it has one: the attributes before it have fixed
// sizes but the first (supported_attrs, a bitmap).
func (c *NFS4Compound) fattr(x *xdr) {
	n := x.count(4)
	var mask uint32
	for i := range n {
		if w := x.u32(); i == 0 {
			mask = w
		}
	}
	attrs := x.opaque()
	if !x.ok() || mask&(1<<11) == 0 {
		return
	}
	a := xdr{b: attrs}
	for bit := range 11 {
		switch {
		case mask&(1<<bit) == 0:
		case bit == 0: // supported_attrs
			a.skipBitmap()
		case bit == 3 || bit == 4: // change, size
			a.skip(8)
		case bit == 8: // fsid
			a.skip(16)
		default:
			a.skip(4)
		}
	}
	if v := a.u32(); a.ok() && len(c.Ops) > 0 {
		c.AttrStatus = append(c.AttrStatus, v)
		c.Ops[len(c.Ops)-1].Attrs++
	}
}

// nfs4Skip steps over an op's arguments or results.
type nfs4Skip func(x *xdr)

func skipN(n int) nfs4Skip    { return func(x *xdr) { x.skip(n) } }
func skipVoid(*xdr)           {}
func skipOpaque1(x *xdr)      { x.opaque() }
func skipFattr(x *xdr)        { x.skipBitmap(); x.opaque() }
func skipLockOwner(x *xdr)    { x.skip(8); x.opaque() }
func skipStateidFattr(x *xdr) { x.skip(16); skipFattr(x) }
func skipCinfoBitmap(x *xdr)  { x.skip(20); x.skipBitmap() }
func skipTwoBitmaps(x *xdr)   { x.skipBitmap(); x.skipBitmap() }
func skipImplID(x *xdr) {
	for range x.count(4) {
		x.opaque()
		x.opaque()
		x.skip(12)
	}
}
func skipChannelAttrs(x *xdr) { x.skipWords(6); x.skipWords(x.count(4)) }
func skipRenameArgs(x *xdr)   { x.opaque(); x.opaque() }
func skipStateidArray(x *xdr) { x.skip(16 * x.count(16)) }
func skipStatusArray(x *xdr)  { x.skipWords(x.count(4)) }
func skipReadRes(x *xdr)      { x.skip(4); x.ddpOpaque() }
func skipWriteArgs(x *xdr)    { x.skip(16 + 8 + 4); x.opaque() }
func skipReaddirArgs(x *xdr)  { x.skip(8 + 8 + 4 + 4); x.skipBitmap() }
func skipSetclientidArgs(x *xdr) {
	x.skip(8)
	x.opaque()
	x.skip(4)
	x.opaque()
	x.opaque()
	x.skip(4)
}

func skipCreateArgs(x *xdr) {
	switch x.u32() {
	case 5: // NF4LNK
		x.opaque()
	case 3, 4: // NF4BLK, NF4CHR
		x.skip(8)
	}
	x.opaque()
	skipFattr(x)
}

func skipLockArgs(x *xdr) {
	x.skip(4 + 4 + 8 + 8)
	if x.u32() != 0 { // new lock owner: open_to_lock_owner4
		x.skip(4 + 16 + 4)
		skipLockOwner(x)
	} else { // exist_lock_owner4
		x.skip(16 + 4)
	}
}

func skipOpenArgs(x *xdr) {
	x.skip(12)
	skipLockOwner(x)  // open_owner4 has lock_owner4's shape
	if x.u32() == 1 { // OPEN4_CREATE
		switch x.u32() {
		case 0, 1: // UNCHECKED4, GUARDED4
			skipFattr(x)
		case 2: // EXCLUSIVE4
			x.skip(8)
		case 3: // EXCLUSIVE4_1
			x.skip(8)
			skipFattr(x)
		default:
			x.invalid()
		}
	}
	switch x.u32() {
	case 0, 3: // CLAIM_NULL, CLAIM_DELEGATE_PREV
		x.opaque()
	case 1: // CLAIM_PREVIOUS
		x.skip(4)
	case 2: // CLAIM_DELEGATE_CUR
		x.skip(16)
		x.opaque()
	case 5: // CLAIM_DELEG_CUR_FH
		x.skip(16)
	case 4, 6: // CLAIM_FH, CLAIM_DELEG_PREV_FH
	default:
		x.invalid()
	}
}

func skipACE(x *xdr) { x.skip(12); x.opaque() }

func skipOpenRes(x *xdr) {
	x.skip(16 + 20 + 4)
	x.skipBitmap()
	skipOpenDelegation(x)
}

// skipOpenDelegation steps over an open_delegation4.
func skipOpenDelegation(x *xdr) {
	switch x.u32() {
	case 0: // OPEN_DELEGATE_NONE
	case 1: // READ: stateid, recall, permissions
		x.skip(20)
		skipACE(x)
	case 2: // WRITE: stateid, recall, space limit, permissions
		x.skip(20 + 4 + 8) // limitby, then a size or blocks × block size: 8 bytes either way
		skipACE(x)
	case 3: // OPEN_DELEGATE_NONE_EXT
		if w := x.u32(); w == 1 || w == 2 {
			x.skip(4)
		}
	default:
		x.invalid()
	}
}

func skipReaddirRes(x *xdr) {
	x.skip(8)
	for x.ok() && x.u32() != 0 {
		x.skip(8)
		x.opaque()
		skipFattr(x)
	}
	x.skip(4)
}

func skipSecinfoRes(x *xdr) {
	for range x.count(4) {
		if x.u32() == 6 { // RPCSEC_GSS
			x.opaque()
			x.skip(8)
		}
	}
}

func skipStateProtectArgs(x *xdr) {
	switch x.u32() {
	case 0: // SP4_NONE
	case 1: // SP4_MACH_CRED
		skipTwoBitmaps(x)
	case 2: // SP4_SSV
		skipTwoBitmaps(x)
		x.skipOpaques(x.count(4))
		x.skipOpaques(x.count(4))
		x.skip(8)
	default:
		x.invalid()
	}
}

func skipStateProtectRes(x *xdr) {
	switch x.u32() {
	case 0:
	case 1:
		skipTwoBitmaps(x)
	case 2:
		skipTwoBitmaps(x)
		x.skip(16)
		x.skipOpaques(x.count(4))
	default:
		x.invalid()
	}
}

func skipExchangeIDArgs(x *xdr) {
	x.skip(8)
	x.opaque()
	x.skip(4)
	skipStateProtectArgs(x)
	skipImplID(x)
}

func skipExchangeIDRes(x *xdr) {
	x.skip(8 + 4 + 4)
	skipStateProtectRes(x)
	x.skip(8)
	x.opaque()
	x.opaque()
	skipImplID(x)
}

func skipCallbackSec(x *xdr) {
	for range x.count(4) {
		switch x.u32() {
		case 0: // AUTH_NONE
		case 1: // AUTH_SYS
			x.skip(4)
			x.opaque()
			x.skip(8)
			x.skipWords(x.count(4))
		case 6: // RPCSEC_GSS
			x.skip(4)
			x.opaque()
			x.opaque()
		default:
			x.invalid()
			return
		}
	}
}

func skipCreateSessionArgs(x *xdr) {
	x.skip(16)
	skipChannelAttrs(x)
	skipChannelAttrs(x)
	x.skip(4)
	skipCallbackSec(x)
}

func skipCreateSessionRes(x *xdr) {
	x.skip(24)
	skipChannelAttrs(x)
	skipChannelAttrs(x)
}

func skipBackchannelCtl(x *xdr) { x.skip(4); skipCallbackSec(x) }

// nfs4Ops describes each op: its name as Wireshark shows it and how to
// step over its arguments and its results (nfs4_ops.go composes those of
// the ops the other functions here do not name).
var nfs4Ops = map[uint32]struct {
	name     string
	arg, res nfs4Skip
}{
	3:     {"ACCESS", skipN(4), skipN(8)},
	4:     {"CLOSE", skipN(20), skipN(16)},
	5:     {"COMMIT", skipN(12), skipN(8)},
	6:     {"CREATE", skipCreateArgs, skipCinfoBitmap},
	7:     {"DELEGPURGE", skipN(8), skipVoid},
	8:     {"DELEGRETURN", skipN(16), skipVoid},
	9:     {"GETATTR", func(x *xdr) { x.skipBitmap() }, skipFattr},
	10:    {"GETFH", skipVoid, skipOpaque1},
	11:    {"LINK", skipOpaque1, skipN(20)},
	12:    {"LOCK", skipLockArgs, skipN(16)},
	13:    {"LOCKT", func(x *xdr) { x.skip(20); skipLockOwner(x) }, skipVoid},
	14:    {"LOCKU", skipN(4 + 4 + 16 + 16), skipN(16)},
	15:    {"LOOKUP", skipOpaque1, skipVoid},
	16:    {"LOOKUPP", skipVoid, skipVoid},
	17:    {"NVERIFY", skipFattr, skipVoid},
	18:    {"OPEN", skipOpenArgs, skipOpenRes},
	19:    {"OPENATTR", skipN(4), skipVoid},
	20:    {"OPEN_CONFIRM", skipN(20), skipN(16)},
	21:    {"OPEN_DOWNGRADE", skipN(28), skipN(16)},
	22:    {"PUTFH", skipOpaque1, skipVoid},
	23:    {"PUTPUBFH", skipVoid, skipVoid},
	24:    {"PUTROOTFH", skipVoid, skipVoid},
	25:    {"READ", skipN(28), skipReadRes},
	26:    {"READDIR", skipReaddirArgs, skipReaddirRes},
	27:    {"READLINK", skipVoid, func(x *xdr) { x.ddpOpaque() }},
	28:    {"REMOVE", skipOpaque1, skipN(20)},
	29:    {"RENAME", skipRenameArgs, skipN(40)},
	30:    {"RENEW", skipN(8), skipVoid},
	31:    {"RESTOREFH", skipVoid, skipVoid},
	32:    {"SAVEFH", skipVoid, skipVoid},
	33:    {"SECINFO", skipOpaque1, skipSecinfoRes},
	34:    {"SETATTR", skipStateidFattr, func(x *xdr) { x.skipBitmap() }},
	35:    {"SETCLIENTID", skipSetclientidArgs, skipN(16)},
	36:    {"SETCLIENTID_CONFIRM", skipN(16), skipVoid},
	37:    {"VERIFY", skipFattr, skipVoid},
	38:    {"WRITE", skipWriteArgs, skipN(16)},
	39:    {"RELEASE_LOCKOWNER", skipLockOwner, skipVoid},
	40:    {"BACKCHANNEL_CTL", skipBackchannelCtl, skipVoid},
	41:    {"BIND_CONN_TO_SESSION", skipN(24), skipN(24)},
	42:    {"EXCHANGE_ID", skipExchangeIDArgs, skipExchangeIDRes},
	43:    {"CREATE_SESSION", skipCreateSessionArgs, skipCreateSessionRes},
	44:    {"DESTROY_SESSION", skipN(16), skipVoid},
	45:    {"FREE_STATEID", skipN(16), skipVoid},
	46:    {"GET_DIR_DELEGATION", seq(skipN(4), skipBitmap, skipN(24), skipBitmap, skipBitmap), skipGetDirDelegRes},
	47:    {"GETDEVINFO", seq(skipN(24), skipBitmap), seq(skipN(4), skipOpaque1, skipBitmap)},
	48:    {"GETDEVLIST", skipN(24), seq(skipN(16), array(16, skipN(16)), skipN(4))},
	49:    {"LAYOUTCOMMIT", seq(skipN(36), optional(skipN(8)), optional(skipN(12)), skipN(4), skipOpaque1), optional(skipN(8))},
	50:    {"LAYOUTGET", skipN(56), seq(skipN(20), array(28, seq(skipN(24), skipOpaque1)))},
	51:    {"LAYOUTRETURN", seq(skipN(12), union(arm{1, seq(skipN(32), skipOpaque1)}, arm{2, skipVoid}, arm{3, skipVoid})), optional(skipN(16))},
	52:    {"SECINFO_NO_NAME", skipN(4), skipSecinfoRes},
	53:    {"SEQUENCE", skipN(32), skipN(36)},
	54:    {"SET_SSV", seq(skipOpaque1, skipOpaque1), skipOpaque1},
	55:    {"TEST_STATEID", skipStateidArray, array(4, skipStatus)},
	56:    {"WANT_DELEG", seq(skipN(4), union(arm{1, skipN(4)}, arm{4, skipVoid}, arm{6, skipVoid})), skipOpenDelegation},
	57:    {"DESTROY_CLIENTID", skipN(8), skipVoid},
	58:    {"RECLAIM_COMPLETE", skipN(4), skipVoid},
	59:    {"ALLOCATE", skipN(32), skipVoid},
	62:    {"DEALLOCATE", skipN(32), skipVoid},
	60:    {"COPY", seq(skipN(64), array(4, skipNetloc)), seq(skipWriteResponse, skipN(8))},
	61:    {"COPY_NOTIFY", seq(skipN(16), skipNetloc), seq(skipN(28), array(4, skipNetloc))},
	63:    {"IO_ADVISE", seq(skipN(32), skipBitmap), skipBitmap},
	64:    {"LAYOUTERROR", seq(skipN(32), array(24, seq(skipN(16), skipStatus, skipN(4)))), skipVoid},
	65:    {"LAYOUTSTATS", seq(skipN(84), skipOpaque1), skipVoid},
	66:    {"OFFLOAD_CANCEL", skipN(16), skipVoid},
	67:    {"OFFLOAD_STATUS", skipN(16), seq(skipN(8), skipStatusArray)},
	68:    {"READ_PLUS", skipN(28), seq(skipN(4), array(4, union(arm{0, seq(skipN(8), skipOpaque1)}, arm{1, skipN(16)})))},
	70:    {"WRITE_SAME", seq(skipN(64), skipOpaque1), skipWriteResponse},
	71:    {"CLONE", skipN(56), skipVoid},
	72:    {"GETXATTR", skipOpaque1, skipOpaque1},
	73:    {"SETXATTR", seq(skipN(4), skipOpaque1, skipOpaque1), skipN(20)},
	74:    {"LISTXATTRS", skipN(12), seq(skipN(8), array(4, skipOpaque1), skipN(4))},
	75:    {"REMOVEXATTR", skipOpaque1, skipN(20)},
	69:    {"SEEK", skipN(28), skipN(12)},
	10044: {"ILLEGAL", skipVoid, skipVoid},
}

// NFS4OpName names an NFSv4 operation as Wireshark does ("" if unknown).
func NFS4OpName(op uint32) string { return nfs4Ops[op].name }

// NFS4StatusName names an nfsstat4 value ("NFS4_OK", "NFS4ERR_NOENT").
func NFS4StatusName(s uint32) string {
	if n, ok := nfs4StatusNames[s]; ok {
		return n
	}
	return ""
}

var nfs4StatusNames = map[uint32]string{
	0: "NFS4_OK", 1: "NFS4ERR_PERM", 2: "NFS4ERR_NOENT", 5: "NFS4ERR_IO", 6: "NFS4ERR_NXIO",
	13: "NFS4ERR_ACCESS", 17: "NFS4ERR_EXIST", 18: "NFS4ERR_XDEV", 20: "NFS4ERR_NOTDIR",
	21: "NFS4ERR_ISDIR", 22: "NFS4ERR_INVAL", 27: "NFS4ERR_FBIG", 28: "NFS4ERR_NOSPC",
	30: "NFS4ERR_ROFS", 31: "NFS4ERR_MLINK", 63: "NFS4ERR_NAMETOOLONG", 66: "NFS4ERR_NOTEMPTY",
	69: "NFS4ERR_DQUOT", 70: "NFS4ERR_STALE",
	10001: "NFS4ERR_BADHANDLE", 10003: "NFS4ERR_BAD_COOKIE", 10004: "NFS4ERR_NOTSUPP",
	10005: "NFS4ERR_TOOSMALL", 10006: "NFS4ERR_SERVERFAULT", 10007: "NFS4ERR_BADTYPE",
	10008: "NFS4ERR_DELAY", 10009: "NFS4ERR_SAME", 10010: "NFS4ERR_DENIED",
	10011: "NFS4ERR_EXPIRED", 10012: "NFS4ERR_LOCKED", 10013: "NFS4ERR_GRACE",
	10014: "NFS4ERR_FHEXPIRED", 10015: "NFS4ERR_SHARE_DENIED", 10016: "NFS4ERR_WRONGSEC",
	10017: "NFS4ERR_CLID_INUSE", 10018: "NFS4ERR_RESOURCE", 10019: "NFS4ERR_MOVED",
	10020: "NFS4ERR_NOFILEHANDLE", 10021: "NFS4ERR_MINOR_VERS_MISMATCH",
	10022: "NFS4ERR_STALE_CLIENTID", 10023: "NFS4ERR_STALE_STATEID",
	10024: "NFS4ERR_OLD_STATEID", 10025: "NFS4ERR_BAD_STATEID", 10026: "NFS4ERR_BAD_SEQID",
	10027: "NFS4ERR_NOT_SAME", 10028: "NFS4ERR_LOCK_RANGE", 10029: "NFS4ERR_SYMLINK",
	10030: "NFS4ERR_RESTOREFH", 10031: "NFS4ERR_LEASE_MOVED", 10032: "NFS4ERR_ATTRNOTSUPP",
	10033: "NFS4ERR_NO_GRACE", 10034: "NFS4ERR_RECLAIM_BAD", 10035: "NFS4ERR_RECLAIM_CONFLICT",
	10036: "NFS4ERR_BADXDR", 10037: "NFS4ERR_LOCKS_HELD", 10038: "NFS4ERR_OPENMODE",
	10039: "NFS4ERR_BADOWNER", 10040: "NFS4ERR_BADCHAR", 10041: "NFS4ERR_BADNAME",
	10042: "NFS4ERR_BAD_RANGE", 10043: "NFS4ERR_LOCK_NOTSUPP", 10044: "NFS4ERR_OP_ILLEGAL",
	10045: "NFS4ERR_DEADLOCK", 10046: "NFS4ERR_FILE_OPEN", 10047: "NFS4ERR_ADMIN_REVOKED",
	10048: "NFS4ERR_CB_PATH_DOWN", 10049: "NFS4ERR_BADIOMODE", 10050: "NFS4ERR_BADLAYOUT",
	10051: "NFS4ERR_BAD_SESSION_DIGEST", 10052: "NFS4ERR_BADSESSION", 10053: "NFS4ERR_BADSLOT",
	10054: "NFS4ERR_COMPLETE_ALREADY", 10055: "NFS4ERR_CONN_NOT_BOUND_TO_SESSION",
	10056: "NFS4ERR_DELEG_ALREADY_WANTED", 10057: "NFS4ERR_BACK_CHAN_BUSY",
	10058: "NFS4ERR_LAYOUTTRYLATER", 10059: "NFS4ERR_LAYOUTUNAVAILABLE",
	10060: "NFS4ERR_NOMATCHING_LAYOUT", 10061: "NFS4ERR_RECALLCONFLICT",
	10062: "NFS4ERR_UNKNOWN_LAYOUTTYPE", 10063: "NFS4ERR_SEQ_MISORDERED",
	10064: "NFS4ERR_SEQUENCE_POS", 10065: "NFS4ERR_REQ_TOO_BIG", 10066: "NFS4ERR_REP_TOO_BIG",
	10067: "NFS4ERR_REP_TOO_BIG_TO_CACHE", 10068: "NFS4ERR_RETRY_UNCACHED_REP",
	10069: "NFS4ERR_UNSAFE_COMPOUND", 10070: "NFS4ERR_TOO_MANY_OPS",
	10071: "NFS4ERR_OP_NOT_IN_SESSION", 10072: "NFS4ERR_HASH_ALG_UNSUPP",
	10074: "NFS4ERR_CLIENTID_BUSY", 10075: "NFS4ERR_PNFS_IO_HOLE",
	10076: "NFS4ERR_SEQ_FALSE_RETRY", 10077: "NFS4ERR_BAD_HIGH_SLOT",
	10078: "NFS4ERR_DEADSESSION", 10079: "NFS4ERR_ENCR_ALG_UNSUPP",
	10080: "NFS4ERR_PNFS_NO_LAYOUT", 10081: "NFS4ERR_NOT_ONLY_OP", 10082: "NFS4ERR_WRONG_CRED",
	10083: "NFS4ERR_WRONG_TYPE", 10084: "NFS4ERR_DIRDELEG_UNAVAIL", 10085: "NFS4ERR_REJECT_DELEG",
	10086: "NFS4ERR_RETURNCONFLICT", 10087: "NFS4ERR_DELEG_REVOKED",
	10073: "NFS4ERR_CONN_BINDING_NOT_ENFORCED", 10088: "NFS4ERR_PARTNER_NOTSUPP",
	10089: "NFS4ERR_PARTNER_NO_AUTH", 10090: "NFS4ERR_UNION_NOTSUPP", 10091: "NFS4ERR_OFFLOAD_DENIED",
	10092: "NFS4ERR_WRONG_LFS", 10093: "NFS4ERR_BADLABEL", 10094: "NFS4ERR_OFFLOAD_NO_REQS",
	10095: "NFS4ERR_NOXATTR", 10096: "NFS4ERR_XATTR2BIG",
}
