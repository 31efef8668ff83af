package decode

// Fields of the MPT check (see MPTCheck): rocetap.mpt.*. Like the session
// analysis they exist only on packets a tracker looked at, and only when
// it was given an MPT.

// mptFields registers the rocetap.mpt.* fields under rt and returns them.
func mptFields(rt *Field) []*Field {
	var all []*Field
	m := func(p *Packet) *MPTCheck { return &p.Analysis.MPT }
	checked := func(p *Packet) bool { return p.Analysis.Tracked && p.Analysis.MPT.Checked }
	u := func(abbrev, name string, t FieldType, base Base, ok func(*MPTCheck) bool, get func(*MPTCheck) uint64) {
		all = append(all, condUint(rt, abbrev, name, t, base, 0, -1, 0,
			func(p *Packet) bool { return checked(p) && ok(m(p)) },
			func(p *Packet) uint64 { return get(m(p)) }))
	}
	always := func(*MPTCheck) bool { return true }
	one := func(*MPTCheck) uint64 { return 1 }
	s := func(abbrev, name string, get func(*MPTCheck) string) {
		all = append(all, stringField(rt, abbrev, name, 0, func(p *Packet) string {
			if !p.Analysis.Tracked {
				return ""
			}
			return get(m(p))
		}))
	}

	u("rocetap.mpt.checked", "Checked against the MPT", FTBoolean, BaseNone, always, one)
	s("rocetap.mpt.op", "MPT access", func(c *MPTCheck) string {
		if !c.Checked {
			return ""
		}
		return c.Op.String()
	})
	s("rocetap.mpt.verdict", "MPT verdict", func(c *MPTCheck) string {
		if !c.Checked {
			return ""
		}
		return c.VerdictName
	})
	u("rocetap.mpt.violation", "The MPT forbids this access", FTBoolean, BaseNone, func(c *MPTCheck) bool { return !c.Allowed }, one)
	u("rocetap.mpt.rkey", "MPT R_Key", FTUint32, BaseHex, always, func(c *MPTCheck) uint64 { return uint64(c.RKey) })
	u("rocetap.mpt.mr", "MPT memory region (R_Key)", FTUint32, BaseHex, func(c *MPTCheck) bool { return c.HasMR }, func(c *MPTCheck) uint64 { return uint64(c.MR) })
	u("rocetap.mpt.window", "Memory window", FTBoolean, BaseNone, func(c *MPTCheck) bool { return c.HasRange }, func(c *MPTCheck) uint64 { return b2u(c.Window) })
	u("rocetap.mpt.mr_va", "Range granted: start", FTUint64, BaseHex, func(c *MPTCheck) bool { return c.HasRange }, func(c *MPTCheck) uint64 { return c.Base })
	u("rocetap.mpt.mr_len", "Range granted: length", FTUint64, BaseDec, func(c *MPTCheck) bool { return c.HasRange }, func(c *MPTCheck) uint64 { return c.Size })
	u("rocetap.mpt.offset", "Offset into the range", FTUint64, BaseDec, func(c *MPTCheck) bool { return c.HasOffset }, func(c *MPTCheck) uint64 { return c.Offset })
	u("rocetap.mpt.pa", "Physical address of the first byte", FTUint64, BaseHex, func(c *MPTCheck) bool { return c.HasPA }, func(c *MPTCheck) uint64 { return c.PA })
	u("rocetap.mpt.over", "Bytes out of bounds", FTUint64, BaseDec, func(c *MPTCheck) bool { return c.Over > 0 }, func(c *MPTCheck) uint64 { return c.Over })
	u("rocetap.mpt.cache_hit", "Translation cache hit", FTBoolean, BaseNone, func(c *MPTCheck) bool { return c.HasCache }, func(c *MPTCheck) uint64 { return b2u(c.CacheHit) })
	s("rocetap.mpt.finding", "MPT finding", func(c *MPTCheck) string { return c.Finding.String() })
	return all
}
