package decode

// Helpers that keep the field tables in fields_*.go short.

func hdrField(abbrev, name string, t FieldType, hdr Hdr, span func(*Packet) []byte) *Field {
	f := &Field{Abbrev: abbrev, Name: name, Type: t, hdr: hdr, span: span}
	f.values = func(p *Packet, out []Value) []Value {
		if t == FTBytes {
			return append(out, Value{B: span(p)})
		}
		return append(out, Value{})
	}
	return register(f)
}

func uintField(parent *Field, abbrev, name string, t FieldType, base Base, mask uint64, off, ln int, get func(*Packet) uint64) *Field {
	return register(&Field{Abbrev: abbrev, Name: name, Type: t, Base: base, Bitmask: mask, Parent: parent, Off: off, Len: ln,
		values: func(p *Packet, out []Value) []Value { return append(out, Value{U: get(p)}) }, uint: get})
}

// condUint registers an integer field present only when ok(p).
func condUint(parent *Field, abbrev, name string, t FieldType, base Base, mask uint64, off, ln int, ok func(*Packet) bool, get func(*Packet) uint64) *Field {
	return register(&Field{Abbrev: abbrev, Name: name, Type: t, Base: base, Bitmask: mask, Parent: parent, Off: off, Len: ln,
		values: func(p *Packet, out []Value) []Value {
			if !ok(p) {
				return out
			}
			return append(out, Value{U: get(p)})
		}, uint: get, cond: ok})
}

func boolField(parent *Field, abbrev, name string, mask uint64, off int, get func(*Packet) bool) *Field {
	return register(&Field{Abbrev: abbrev, Name: name, Type: FTBoolean, Bitmask: mask, Parent: parent, Off: off, Len: 1,
		values: func(p *Packet, out []Value) []Value {
			if get(p) {
				return append(out, Value{U: 1})
			}
			return append(out, Value{U: 0})
		}, uint: func(p *Packet) uint64 { return b2u(get(p)) }})
}

func bytesField(parent *Field, abbrev, name string, t FieldType, off, ln int, get func(*Packet) []byte) *Field {
	return register(&Field{Abbrev: abbrev, Name: name, Type: t, Parent: parent, Off: off, Len: ln,
		values: func(p *Packet, out []Value) []Value {
			b := get(p)
			if b == nil {
				return out
			}
			return append(out, Value{B: b})
		}})
}

func stringField(parent *Field, abbrev, name string, hdr Hdr, get func(*Packet) string) *Field {
	return register(&Field{Abbrev: abbrev, Name: name, Type: FTString, Parent: parent, hdr: hdr, Off: -1,
		values: func(p *Packet, out []Value) []Value {
			s := get(p)
			if s == "" {
				return out
			}
			return append(out, Value{S: s})
		}})
}

// multiField registers a field with its own values function (several
// occurrences, or conditional presence).
func multiField(parent *Field, abbrev, name string, t FieldType, base Base, hdr Hdr, values func(p *Packet, out []Value) []Value) *Field {
	return register(&Field{Abbrev: abbrev, Name: name, Type: t, Base: base, Parent: parent, hdr: hdr, Off: -1, values: values})
}

func ipv4U(a [4]byte) uint64 {
	return uint64(a[0])<<24 | uint64(a[1])<<16 | uint64(a[2])<<8 | uint64(a[3])
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// SetPresence replaces the field's presence test: hdr bits, then ok.
func (f *Field) SetPresence(hdr Hdr, ok func(*Packet) bool) {
	f.hdr = hdr
	if prev := f.cond; prev != nil {
		f.cond = func(p *Packet) bool { return ok(p) && prev(p) }
	} else {
		f.cond = ok
	}
	values := f.values
	f.values = func(p *Packet, out []Value) []Value {
		if !ok(p) {
			return out
		}
		return values(p, out)
	}
}

// hidden registers an either-side field (ip.addr, udp.port, ...): usable in
// -T fields and filters, not shown in the verbose tree, as in Wireshark.
func hidden(parent *Field, abbrev, name string, t FieldType, base Base, hdr Hdr, values func(p *Packet, out []Value) []Value) *Field {
	f := multiField(parent, abbrev, name, t, base, hdr, values)
	f.Hidden = true
	return f
}
