// Package decode turns captured frames into InfiniBand transport headers.
//
// It has two faces that share one implementation of every header:
//
//   - gopacket layers (LayerTypeBTH, LayerTypeRETH, ...) registered with
//     gopacket so that gopacket.NewPacket on an Ethernet frame carrying RoCEv2
//     (UDP destination port 4791), RoCEv1 (EtherType 0x8915) or a native
//     InfiniBand frame (LRH first) yields BTH and its extended headers. Every
//     header type is a gopacket.DecodingLayer and a gopacket.SerializableLayer.
//   - the fast path: Decoder.Decode fills a caller-owned, flat Packet with
//     every field rocetap knows, without allocating. Everything downstream
//     (fields, display filters, the flow tracker, the TUI) reads Packet.
//
// The field registry (Fields, FieldByName) names every field the way
// Wireshark does (infiniband.bth.opcode, ip.src, ...) and formats values the
// way tshark -T fields prints them.
//
// Bad input never panics: a truncated frame is decoded as far as it goes and
// flagged (FlagTruncated), an unknown opcode is decoded up to its BTH and
// flagged (FlagUnknownOpcode).
package decode
