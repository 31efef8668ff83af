#!/usr/bin/python3
"""ICRC/VCRC oracle for rocetap's decode tests (decode/icrc_scapy_test.go).

Usage: /usr/bin/python3 icrc_scapy.py FILE

FILE holds one frame per line: "ID LINKTYPE HEX" (LINKTYPE 1 = Ethernet,
247 = native InfiniBand, LRH first). For every line this prints

    ID scapy=XXXXXXXX|- spec=XXXXXXXX|- rxev1=XXXXXXXX|- vcrc=XXXX|-

where each value is the CRC as a number, and "-" means the oracle does not
apply to the frame. The trailers carry the CRCs least significant byte
first: for the ICRC that is what rxe and scapy (pack_icrc) do; for the VCRC
it is the convention of rocetap's decode/icrc.go, which this script does not
check independently (it only computes the value).

Three oracles:

scapy  scapy.contrib.roce's own ICRC code (BTH.compute_icrc) on the frame as
       scapy dissects it (Ether(bytes)). scapy 2.5 (Debian bookworm) handles
       RoCEv2 over IPv4 only; for IPv6 it returns 0. Newer scapy releases
       handle IPv6 the same way as IPv4 with the IPv6 variant fields (traffic
       class, flow label, hop limit) set to 1s; when the installed
       compute_icrc lacks IPv6 support, compute_icrc_v6 below does that with
       scapy's own packet objects. RoCEv1 and native InfiniBand: "-".
spec   written from the IBA spec (Vol. 1 7.8.1 and Annex A16/A17), with
       zlib.crc32 and hand-written masking, sharing no code with scapy or
       rocetap: CRC-32 over 8 bytes of 0xFF in place of the LRH when the
       packet carries a GRH or an IP header (RoCEv1, RoCEv2, native LNH 3:
       routers rewrite the LRH), else (native LNH 2) over the LRH with VL
       set to 1s; then the GRH or IP header with its variant fields set to
       1s, the UDP header with its checksum set to 1s, the BTH with byte 4
       (FECN, BECN, reserved) set to 1s, then everything up to the ICRC.
       Until issue 14 this oracle covered the LRH of LNH 3 packets too, the
       same mistake as rocetap's, and so agreed with it: an oracle written
       by the same hands from the same reading is not independent, which is
       why rxev1 below exists.
rxev1  a transliteration of rxe_icrc_hdr() and rxe_icrc_pkt() from the
       pre-upstream Soft-RoCE driver (github.com/SoftRoCE/rxe-dev,
       drivers/infiniband/hw/rxe/rxe_icrc.c, (c) 2009-2011 Mellanox and
       System Fabric Works; commit 3331ca2e867a5c2c3b32f63ec7fcded5d2e3be45).
       That driver spoke RoCEv1 (EtherType 0x8915, pkt->hdr pointing at the
       GRH, rxe_net.c) and interoperated with ConnectX RoCE hardware, so its
       ICRC is a second implementation of the GRH rule, written by others
       and tested against silicon. It starts the Linux crc32_le register at
       0xdebb20e3, "the result of computing a CRC with a seed of 0xfffffff
       and 8 bytes of 0xff representing a masked LRH", never reads an LRH,
       masks GRH tclass/flow label/hop limit and BTH byte 4, runs over
       headers, payload and pad, and inverts. Applied to RoCEv1 frames and,
       from the GRH on, to native LNH 3 packets: IBA 7.8.1 gives both the
       same ICRC. "-" for RoCEv2 and LNH 2, which it does not cover.
vcrc   native InfiniBand only: CRC-16, polynomial 0x100B (reflected 0xD008),
       initial value 0xFFFF, final xor 0xFFFF, over the LRH through the ICRC.
"""

import struct
import sys
import zlib

try:
    from scapy.compat import raw
    from scapy.contrib.roce import BTH
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    from scapy.packet import Padding, Raw
except ImportError as e:  # the Go test turns this into a skip
    sys.stderr.write("scapy not importable: %s\n" % e)
    sys.exit(3)

ROCEV2_PORT = 4791


def _scapy_has_ipv6():
    """Whether the installed compute_icrc handles IPv6 (2.5 returns 0)."""
    import logging
    log = logging.getLogger("scapy.runtime")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        pkt = Ether(raw(Ether() / IPv6() / UDP(sport=1, dport=ROCEV2_PORT) / BTH(opcode=0x64)))
        return pkt[BTH].compute_icrc(None) != b"\0\0\0\0"
    finally:
        log.setLevel(level)


SCAPY_HAS_IPV6 = _scapy_has_ipv6()


def compute_icrc_v6(bth):
    """scapy's compute_icrc, for RoCEv2 over IPv6, on scapy objects."""
    udp = bth.underlayer
    ip = udp.underlayer
    pshdr = Raw(b"\xff" * 8) / ip.copy()
    pshdr[IPv6].tc = 0xFF
    pshdr[IPv6].fl = 0xFFFFF
    pshdr[IPv6].hlim = 0xFF
    pshdr[UDP].chksum = 0xFFFF
    pshdr[BTH].fecn = 1
    pshdr[BTH].becn = 1
    pshdr[BTH].resv6 = 0x3F
    hdr = pshdr[BTH].self_build()
    body = raw(pshdr[BTH].payload)
    pshdr[UDP].payload = Raw(hdr + body + b"\xff\xff\xff\xff")
    return zlib.crc32(raw(pshdr)[:-4]) & 0xFFFFFFFF


def scapy_icrc(frame):
    """ICRC by scapy's code, or None when the frame is not RoCEv2."""
    pkt = Ether(frame)
    if UDP not in pkt or pkt[UDP].dport != ROCEV2_PORT:
        return None
    if BTH not in pkt:
        # A well-known source port can make scapy pick another protocol.
        pkt[UDP].decode_payload_as(BTH)
    if Padding in pkt:
        # Ethernet padding (frames under 60 bytes) ends up as the payload of
        # the innermost layer, which is BTH itself when the packet has no
        # payload: compute_icrc would then count it. It is not part of the
        # RoCE packet (IP total length excludes it), so drop it.
        pkt[Padding].underlayer.remove_payload()
    bth = pkt[BTH]
    ip = pkt[UDP].underlayer
    if isinstance(ip, IPv6) and not SCAPY_HAS_IPV6:
        return compute_icrc_v6(bth)
    if not isinstance(ip, (IP, IPv6)):
        return None
    wire = bth.compute_icrc(None)  # little-endian wire bytes
    return struct.unpack("<I", wire)[0]


# --- spec oracle ------------------------------------------------------------


def mask_bth(b, off):
    b[off + 4] = 0xFF


def mask_grh(b, off):
    """GRH or IPv6 header: traffic class, flow label, hop limit."""
    b[off] |= 0x0F
    b[off + 1] = b[off + 2] = b[off + 3] = 0xFF
    b[off + 7] = 0xFF


def ether_payload(frame):
    """Returns (ethertype, offset) after any 802.1Q/802.1ad tags."""
    off = 12
    et = struct.unpack_from(">H", frame, off)[0]
    off += 2
    while et in (0x8100, 0x88A8, 0x9100):
        et = struct.unpack_from(">H", frame, off + 2)[0]
        off += 4
    return et, off


def spec_rocev2(frame, ip):
    b = bytearray(frame)
    ver = b[ip] >> 4
    if ver == 4:
        ihl = (b[ip] & 0x0F) * 4
        if b[ip + 9] != 17:
            return None
        udp = ip + ihl
        b[ip + 1] = 0xFF  # TOS
        b[ip + 8] = 0xFF  # TTL
        b[ip + 10] = b[ip + 11] = 0xFF  # header checksum
    elif ver == 6:
        if b[ip + 6] != 17:
            return None
        udp = ip + 40
        mask_grh(b, ip)
    else:
        return None
    dport, ulen = struct.unpack_from(">HH", b, udp + 2)
    if dport != ROCEV2_PORT:
        return None
    b[udp + 6] = b[udp + 7] = 0xFF  # UDP checksum
    mask_bth(b, udp + 8)
    end = udp + ulen  # end of the ICRC
    return zlib.crc32(b"\xff" * 8 + bytes(b[ip:end - 4])) & 0xFFFFFFFF


def spec_rocev1(frame, grh):
    b = bytearray(frame)
    if b[grh + 6] != 0x1B:
        return None
    paylen = struct.unpack_from(">H", b, grh + 4)[0]
    mask_grh(b, grh)
    mask_bth(b, grh + 40)
    end = grh + 40 + paylen
    return zlib.crc32(b"\xff" * 8 + bytes(b[grh:end - 4])) & 0xFFFFFFFF


def spec_ethernet(frame):
    et, off = ether_payload(frame)
    if et in (0x0800, 0x86DD):
        return spec_rocev2(frame, off)
    if et == 0x8915:
        return spec_rocev1(frame, off)
    return None


def crc16_vcrc(data):
    c = 0xFFFF
    for byte in data:
        c ^= byte
        for _ in range(8):
            c = (c >> 1) ^ 0xD008 if c & 1 else c >> 1
    return c ^ 0xFFFF


def spec_ib(frame):
    """Native InfiniBand: returns (icrc, vcrc)."""
    b = bytearray(frame)
    lnh = b[1] & 3
    pktlen = (struct.unpack_from(">H", b, 4)[0] & 0x7FF) * 4  # LRH..ICRC
    vcrc = crc16_vcrc(bytes(frame[:pktlen]))
    off = 8
    if lnh == 3:
        b[0:8] = b"\xff" * 8  # IBA 7.8.1: routers rewrite the LRH
        mask_grh(b, off)
        off += 40
    elif lnh == 2:
        b[0] |= 0xF0  # VL
    else:
        return None, vcrc
    mask_bth(b, off)
    return zlib.crc32(bytes(b[:pktlen - 4])) & 0xFFFFFFFF, vcrc


# --- rxev1: SoftRoCE rxe-dev's RoCEv1 ICRC ---------------------------------


def crc32_le(crc, data):
    """Linux lib/crc32.c crc32_le(): the reflected CRC-32 register, neither
    inverted on entry nor on exit. zlib.crc32(data, v) starts from ~v and
    returns the register inverted, hence the two inversions."""
    return ~zlib.crc32(data, ~crc & 0xFFFFFFFF) & 0xFFFFFFFF


RXE_LRH_BYTES, RXE_GRH_BYTES, RXE_BTH_BYTES, RXE_ICRC_SIZE = 8, 40, 12, 4


def rxev1_icrc(hdr, has_lrh, paylen):
    """rxe_icrc_pkt(): hdr starts at the LRH (has_lrh) or at the GRH; every
    packet it sees has a GRH (RXE_GRH_MASK). paylen is rxe's pkt->paylen,
    BTH through ICRC. rxe_icrc_hdr() runs over the masked headers and the
    extended headers, rxe_icrc_pkt() over payload and pad: the two are
    contiguous, so one call covers them here."""
    crc = 0xDEBB20E3
    length = RXE_BTH_BYTES
    grh_offset = bth_offset = 0
    if has_lrh:
        length += RXE_LRH_BYTES
        grh_offset += RXE_LRH_BYTES
        bth_offset += RXE_LRH_BYTES
    length += RXE_GRH_BYTES  # pkt->mask & RXE_GRH_MASK
    bth_offset += RXE_GRH_BYTES
    tmp = bytearray(hdr[:length])
    tmp[grh_offset + 0] |= 0x0F  # GRH: tclass
    tmp[grh_offset + 1] = 0xFF
    tmp[grh_offset + 2] = 0xFF
    tmp[grh_offset + 3] = 0xFF
    tmp[grh_offset + 7] = 0xFF
    tmp[bth_offset + 4] = 0xFF  # BTH: resv8a
    crc = crc32_le(crc, bytes(tmp[grh_offset:length]))
    end = bth_offset + paylen - RXE_ICRC_SIZE
    crc = crc32_le(crc, bytes(hdr[length:end]))
    return ~crc & 0xFFFFFFFF


def rxev1_ethernet(frame):
    et, off = ether_payload(frame)
    if et != 0x8915 or frame[off + 6] != 0x1B:
        return None
    paylen = struct.unpack_from(">H", frame, off + 4)[0]  # GRH PayLen: BTH..ICRC
    return rxev1_icrc(frame[off:], False, paylen)


def rxev1_ib(frame):
    if frame[1] & 3 != 3 or frame[8 + 6] != 0x1B:
        return None
    paylen = struct.unpack_from(">H", frame, 8 + 4)[0]
    return rxev1_icrc(frame, True, paylen)


def fmt(v, width):
    return "-" if v is None else "%0*x" % (width, v)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: icrc_scapy.py FILE\n")
        return 2
    out = []
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            ident, link, hexdata = line.split()
            frame = bytes.fromhex(hexdata)
            sc = sp = rx = vc = None
            if link == "1":
                sc = scapy_icrc(frame)
                sp = spec_ethernet(frame)
                rx = rxev1_ethernet(frame)
            elif link == "247":
                sp, vc = spec_ib(frame)
                rx = rxev1_ib(frame)
            out.append("%s scapy=%s spec=%s rxev1=%s vcrc=%s" % (
                ident, fmt(sc, 8), fmt(sp, 8), fmt(rx, 8), fmt(vc, 4)))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
