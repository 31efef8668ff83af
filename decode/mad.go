package decode

import "github.com/gopacket/gopacket"

// MAD is a placeholder replaced by the MAD decoder.
type MAD struct{}

// CM is a placeholder replaced by the CM decoder.
type CM struct{}

func (p *Packet) decodeMAD(payload []byte) {}

func decodeMADLayer(data []byte, p gopacket.PacketBuilder) error { return nil }
func decodeCMLayer(data []byte, p gopacket.PacketBuilder) error  { return nil }
