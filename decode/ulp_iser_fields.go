package decode

// registerISERFields registers Wireshark's iser.* fields, read from
// p.Analysis.ULP.ISER (the header of the SEND a tracker found on an iSER
// connection), so they exist only on tracked packets.
func registerISERFields() {
	var all []*Field
	hdr := func(p *Packet) *ISER {
		if u := p.Analysis.ULP; u != nil && p.Analysis.Tracked {
			return u.ISER
		}
		return nil
	}
	iser := hdrField("iser", "iSCSI Extensions for RDMA", FTProtocol, 0, nil)
	iser.SetPresence(0, func(p *Packet) bool { return hdr(p) != nil })
	all = append(all, iser)
	u := func(abbrev, name string, t FieldType, base Base, mask uint64, off, ln int, ok func(h *ISER) bool, get func(h *ISER) uint64) *Field {
		f := condUint(iser, abbrev, name, t, base, mask, off, ln,
			func(p *Packet) bool { h := hdr(p); return h != nil && h.Have >= off+ln && ok(h) },
			func(p *Packet) uint64 { return get(hdr(p)) })
		all = append(all, f)
		return f
	}
	always := func(*ISER) bool { return true }
	ctl := func(h *ISER) bool { return h.Opcode() == ISEROpControl }
	flags := func(h *ISER) uint64 { return uint64(h.Flags) }
	u("iser.flags", "Flags", FTUint8, BaseHex, 0, 0, 1, always, flags)
	op := u("iser.flags.opcode", "Opcode", FTUint8, BaseHex, 0xf0, 0, 1, always, func(h *ISER) uint64 { return uint64(h.Opcode()) })
	op.names = func(v uint64) string { return ISEROpName(uint8(v)) }
	u("iser.flags.wsv", "WSV", FTBoolean, BaseNone, ISERFlagWSV, 0, 1, ctl, func(h *ISER) uint64 { return b2u(h.Flags&ISERFlagWSV != 0) })
	u("iser.flags.rsv", "RSV", FTBoolean, BaseNone, ISERFlagRSV, 0, 1, ctl, func(h *ISER) uint64 { return b2u(h.Flags&ISERFlagRSV != 0) })
	u("iser.flags.rej", "REJ", FTBoolean, BaseNone, ISERFlagREJ, 0, 1, func(h *ISER) bool { return h.Opcode() == ISEROpHelloReply }, func(h *ISER) uint64 { return b2u(h.Flags&ISERFlagREJ != 0) })
	u("iser.write_stag", "Write STag", FTUint32, BaseHex, 0, 4, 4, ctl, func(h *ISER) uint64 { return uint64(h.WriteSTag) })
	u("iser.write_base_offset", "Write Base Offset", FTUint64, BaseHex, 0, 8, 8, ctl, func(h *ISER) uint64 { return h.WriteBaseOffset })
	u("iser.read_stag", "Read STag", FTUint32, BaseHex, 0, 16, 4, ctl, func(h *ISER) uint64 { return uint64(h.ReadSTag) })
	u("iser.read_base_offset", "Read Base Offset", FTUint64, BaseHex, 0, 20, 8, ctl, func(h *ISER) uint64 { return h.ReadBaseOffset })
	u("iser.ird", "iSER-IRD", FTUint16, BaseHex, 0, 2, 2, func(h *ISER) bool { return h.Opcode() == ISEROpHello }, func(h *ISER) uint64 { return uint64(h.IRD) })
	u("iser.ord", "iSER-ORD", FTUint16, BaseHex, 0, 2, 2, func(h *ISER) bool { return h.Opcode() == ISEROpHelloReply }, func(h *ISER) uint64 { return uint64(h.ORD) })
	for _, f := range all {
		f.Stateful = true
	}
}

// registerSMBDirectFields registers Wireshark's smb_direct.* fields, read
// from p.Analysis.ULP.SMBDirect.
func registerSMBDirectFields() {
	var all []*Field
	msg := func(p *Packet) *SMBDirect {
		if u := p.Analysis.ULP; u != nil && p.Analysis.Tracked {
			return u.SMBDirect
		}
		return nil
	}
	sd := hdrField("smb_direct", "SMB-Direct (SMB RDMA Transport)", FTProtocol, 0, nil)
	sd.SetPresence(0, func(p *Packet) bool { return msg(p) != nil })
	all = append(all, sd)
	kind := func(k SMBDirectKind) func(m *SMBDirect) bool { return func(m *SMBDirect) bool { return m.Kind == k } }
	neg := func(m *SMBDirect) bool {
		return m.Kind == SMBDirectNegotiateRequest || m.Kind == SMBDirectNegotiateResponse
	}
	all = append(all, hdrField("smb_direct.negotiate_request", "NegotiateRequest", FTNone, 0, nil),
		hdrField("smb_direct.negotiate_response", "NegotiateResponse", FTNone, 0, nil),
		hdrField("smb_direct.data_message", "DataMessage", FTNone, 0, nil))
	for i, k := range []SMBDirectKind{SMBDirectNegotiateRequest, SMBDirectNegotiateResponse, SMBDirectData} {
		all[len(all)-3+i].Parent = sd
		all[len(all)-3+i].SetPresence(0, func(p *Packet) bool { m := msg(p); return m != nil && m.Kind == k })
	}
	// u registers a field at byte off of the message kinds ok accepts
	// (offsets differ between the kinds: at picks the one of m's kind).
	u := func(abbrev, name string, t FieldType, base Base, mask uint64, ln int, ok func(m *SMBDirect) bool, at func(m *SMBDirect) int, get func(m *SMBDirect) uint64) *Field {
		f := condUint(sd, abbrev, name, t, base, mask, -1, ln,
			func(p *Packet) bool { m := msg(p); return m != nil && ok(m) && m.Have >= at(m)+ln },
			func(p *Packet) uint64 { return get(msg(p)) })
		all = append(all, f)
		return f
	}
	off := func(o int) func(*SMBDirect) int { return func(*SMBDirect) int { return o } }
	byKind := func(req, rep, data int) func(m *SMBDirect) int {
		return func(m *SMBDirect) int {
			switch m.Kind {
			case SMBDirectNegotiateRequest:
				return req
			case SMBDirectNegotiateResponse:
				return rep
			}
			return data
		}
	}
	u("smb_direct.version.min", "MinVersion", FTUint16, BaseHex, 0, 2, neg, off(0), func(m *SMBDirect) uint64 { return uint64(m.MinVersion) })
	u("smb_direct.version.max", "MaxVersion", FTUint16, BaseHex, 0, 2, neg, off(2), func(m *SMBDirect) uint64 { return uint64(m.MaxVersion) })
	u("smb_direct.version.negotiated", "NegotiatedVersion", FTUint16, BaseHex, 0, 2, kind(SMBDirectNegotiateResponse), off(4), func(m *SMBDirect) uint64 { return uint64(m.NegotiatedVersion) })
	u("smb_direct.credits.requested", "CreditsRequested", FTUint16, BaseDec, 0, 2, func(*SMBDirect) bool { return true }, byKind(6, 8, 0), func(m *SMBDirect) uint64 { return uint64(m.CreditsRequested) })
	notReq := func(m *SMBDirect) bool { return m.Kind != SMBDirectNegotiateRequest }
	u("smb_direct.credits.granted", "CreditsGranted", FTUint16, BaseDec, 0, 2, notReq, byKind(0, 10, 2), func(m *SMBDirect) uint64 { return uint64(m.CreditsGranted) })
	u("smb_direct.status", "Status", FTUint32, BaseHex, 0, 4, kind(SMBDirectNegotiateResponse), off(12), func(m *SMBDirect) uint64 { return uint64(m.Status) })
	u("smb_direct.max_read_write_size", "MaxReadWriteSize", FTUint32, BaseDec, 0, 4, kind(SMBDirectNegotiateResponse), off(16), func(m *SMBDirect) uint64 { return uint64(m.MaxReadWriteSize) })
	u("smb_direct.preferred_send_size", "PreferredSendSize", FTUint32, BaseDec, 0, 4, neg, byKind(8, 20, 0), func(m *SMBDirect) uint64 { return uint64(m.PreferredSendSize) })
	u("smb_direct.max_receive_size", "MaxReceiveSize", FTUint32, BaseDec, 0, 4, neg, byKind(12, 24, 0), func(m *SMBDirect) uint64 { return uint64(m.MaxReceiveSize) })
	u("smb_direct.max_fragmented_size", "MaxFragmentedSize", FTUint32, BaseDec, 0, 4, neg, byKind(16, 28, 0), func(m *SMBDirect) uint64 { return uint64(m.MaxFragmentedSize) })
	data := kind(SMBDirectData)
	u("smb_direct.flags", "Flags", FTUint16, BaseHex, 0, 2, data, off(4), func(m *SMBDirect) uint64 { return uint64(m.Flags) })
	u("smb_direct.flags.response_requested", "ResponseRequested", FTBoolean, BaseNone, SMBDirectFlagResponseRequested, 2, data, off(4), func(m *SMBDirect) uint64 {
		return b2u(m.Flags&SMBDirectFlagResponseRequested != 0)
	})
	u("smb_direct.remaining_length", "RemainingLength", FTUint32, BaseDec, 0, 4, data, off(8), func(m *SMBDirect) uint64 { return uint64(m.RemainingLength) })
	u("smb_direct.data_offset", "DataOffset", FTUint32, BaseDec, 0, 4, data, off(12), func(m *SMBDirect) uint64 { return uint64(m.DataOffset) })
	u("smb_direct.data_length", "DataLength", FTUint32, BaseDec, 0, 4, data, off(16), func(m *SMBDirect) uint64 { return uint64(m.DataLen) })
	for _, f := range all {
		f.Stateful = true
	}
}
