package printer

import "github.com/rocetap/rocetap/decode"

// AppendHexDump appends the frame's bytes as tshark -x prints them: lines
// of 16 bytes, "0000  02 00 0a 4d ...   ...M....", the offset in hex, the
// bytes, and their ASCII with '.' for what is not printable; then a
// blank line. An ERF record's frame is what follows its headers, as in
// Wireshark.
func AppendHexDump(dst []byte, p *decode.Packet) []byte {
	data := p.Frame.Data
	if n := p.Frame.CapLen; n >= 0 && n < len(data) {
		data = data[len(data)-n:]
	}
	const hx = "0123456789abcdef"
	digits := 4
	if len(data) > 0x10000 {
		digits = 8
	}
	for off := 0; off < len(data); off += 16 {
		for d := digits - 1; d >= 0; d-- {
			dst = append(dst, hx[off>>(4*d)&0xf])
		}
		dst = append(dst, ' ', ' ')
		line := data[off:min(off+16, len(data))]
		for i := range 16 {
			if i > 0 {
				dst = append(dst, ' ')
			}
			if i < len(line) {
				dst = append(dst, hx[line[i]>>4], hx[line[i]&0xf])
			} else {
				dst = append(dst, ' ', ' ')
			}
		}
		dst = append(dst, ' ', ' ', ' ')
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			dst = append(dst, c)
		}
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}
