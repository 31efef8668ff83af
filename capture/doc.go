// Package capture reads and writes capture files: it frames records and
// reports each record's link type, and never looks inside a packet.
//
// # Formats read
//
//   - classic pcap: magic a1b2c3d4 (microsecond timestamps, Format "pcap")
//     and a1b23c4d (nanosecond timestamps, Format "pcap-ns"), in either byte
//     order. The link type is the low 16 bits of the header's link-type
//     field; an FCS length recorded in its high bits is reported by
//     [Reader.FCSLength].
//   - pcapng (Format "pcapng"): Section Header Blocks in either byte order,
//     several sections per file (each one resets the interfaces), Interface
//     Description Blocks (link type, snapshot length, if_tsresol as a power
//     of 10 or of 2, if_tsoffset), Enhanced, Simple and obsolete Packet
//     Blocks. Interfaces of a section may have different link types; every
//     packet reports its own interface's. Other blocks (name resolution,
//     statistics, decryption secrets, custom, unknown) are skipped.
//   - Endace ERF native files (Format "erf", as written by DAG cards and
//     ibdump): a plain sequence of ERF records. Each record is returned
//     whole, header included, with LinkType 197 (LINKTYPE_ERF), so the
//     decoder handles ERF in a native file and ERF in a pcap the same way.
//     PAD records are skipped. ERF has no magic number: a file is taken as
//     ERF when it has no pcap or pcapng magic and its first records parse as
//     plausible ERF records, when its name ends in ".erf", or when the caller
//     says so with [OpenFormat] or [NewReaderFormat].
//
// Files compressed with gzip, zstd, xz or bzip2 are recognized and refused
// with a message saying how to decompress them.
//
// # Reading
//
// [Open] and [NewReader] return a [Reader], which implements [Source].
// Next returns a slice into an internal buffer (256 KiB, grown for larger
// records up to 256 MiB), valid only until the following call to Next; copy
// it to keep it. [Reader.NextInto] is Next filling the caller's PacketInfo
// in place, for loops over every packet. Reading allocates nothing per
// packet in steady state and runs at about the speed of cat on files in
// the page cache.
//
// Bad input is expected. A record that cannot be framed (a length beyond the
// limits, a block whose trailing length disagrees with its leading one, an
// unknown interface, a file that ends inside a record) stops the reader with
// a [*FormatError] that names the file, the packet number the record would
// have had and the byte offset of its header. Every packet before it has
// been returned by Next. Errors are sticky: later calls return the same
// error.
//
// # Writing
//
// [PcapWriter], [PcapngWriter] and [ERFWriter] write the three formats. They
// issue several small writes per packet and allocate nothing per packet;
// give them a buffered writer (bufio.Writer) and flush it when done.
// [PcapngWriter.WriteInterfaceStats] ends a file with capture statistics.
//
// [Sink] writes a live capture as dumpcap's -w and -b options do: pcapng
// files rotated by size or age, a ring of the last N files, or a pcap
// stream on standard output. A failed write (a full disk) leaves the file
// cut back to its last whole packet.
package capture
