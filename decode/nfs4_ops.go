package decode

// Building blocks of the NFSv4 op table (nfs4Ops): an op's arguments or
// results described as a sequence of XDR items, so a table row reads like
// the RFC's XDR and no op needs its own function.

// seq steps over items one after another.
func seq(items ...nfs4Skip) nfs4Skip {
	return func(x *xdr) {
		for _, s := range items {
			s(x)
		}
	}
}

// skipBitmap steps over a bitmap4.
func skipBitmap(x *xdr) { x.skipBitmap() }

// skipStatus reads an nfsstat4 inside an op's arguments or results, kept
// among the compound's statuses.
func skipStatus(x *xdr) {
	if v := x.u32(); x.ok() {
		x.status = append(x.status, v)
	}
}

// array steps over a counted array of items of at least min bytes each.
func array(min int, item nfs4Skip) nfs4Skip {
	return func(x *xdr) {
		for range x.count(min) {
			item(x)
		}
	}
}

// optional steps over a bool-discriminated union: item when true.
func optional(item nfs4Skip) nfs4Skip {
	return func(x *xdr) {
		if x.u32() != 0 {
			item(x)
		}
	}
}

// arm is one arm of a union: its discriminant and body.
type arm struct {
	tag  uint32
	body nfs4Skip
}

// union steps over a union of the given arms; another discriminant is a
// value the XDR does not allow.
func union(arms ...arm) nfs4Skip {
	return func(x *xdr) {
		tag := x.u32()
		if !x.ok() {
			return
		}
		for _, a := range arms {
			if a.tag == tag {
				a.body(x)
				return
			}
		}
		x.invalid()
	}
}

// Items several ops share.
var (
	// netloc4 (RFC 7862): a name, a URL or a netaddr4
	skipNetloc = union(arm{1, skipOpaque1}, arm{2, skipOpaque1}, arm{3, seq(skipOpaque1, skipOpaque1)})
	// write_response4: a callback stateid<1>, length, stable_how4, verifier
	skipWriteResponse = seq(skipStateidArray, skipN(8+4+8))
	// GET_DIR_DELEGATION4res_non_fatal: GDD4_OK (verifier, stateid, three
	// bitmaps) or GDD4_UNAVAIL (will signal: bool)
	skipGetDirDelegRes = union(arm{0, seq(skipN(24), skipBitmap, skipBitmap, skipBitmap)}, arm{1, skipN(4)})
)
