#!/usr/bin/python3
"""A second, independent generator of bench/run.sh's traffic, with scapy.

Usage: /usr/bin/python3 bench/scapygen.py -n PACKETS -o FILE [-seed S]

Writes a classic pcap (Ethernet, microsecond timestamps; scapy's
PcapWriter) of PACKETS RoCEv2/IPv4 frames: the same kind of traffic as
internal/tools/gencap, written by other code, so that rocetap's speed on
gencap's captures can be checked against a capture gencap did not make.
Nothing here comes from gencap or rocetap:

- every frame is built by scapy layer by layer, Ether / IP / UDP / BTH /
  (RETH | AETH) / 1 KiB payload, and its ICRC is computed by scapy's own
  code (scapy.contrib.roce's BTH.post_build, compute_icrc), the IPv4
  header checksum and lengths by scapy;
- 8 RC QP pairs, each between its own two hosts (10.3.p.1 and 10.3.p.2),
  with QP numbers and first PSNs drawn from Python's random (seeded);
- each pair runs messages of 1 KiB packets (path MTU 1024): RDMA WRITE of 1
  to 8 packets (First/Middle/Last or Only, RETH on the first) then an
  ACK; RDMA READ of 1 to 8 packets (a request with RETH, then READ Response
  First/Middle/Last or Only, AETH on First, Last and Only); SEND of 1 to 3
  packets then an ACK; 40% WRITE, 30% READ, 30% SEND;
- each packet comes from a pair drawn at random, so pairs interleave.

scapy.contrib.roce (2.5) has BTH and AETH but no RETH: RETH is declared
below from the IBA spec (virtual address 64 bits, R_Key 32, DMA length 32).
Building every frame with scapy is slow (a few thousand frames a second):
bench/run.sh makes a smaller capture with it than with gencap, and caches it.
"""

import argparse
import random
import sys

try:
    from scapy.contrib.roce import AETH, BTH
    from scapy.fields import IntField, XIntField, XLongField
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Packet, Raw
    from scapy.utils import PcapWriter
except ImportError as e:
    sys.stderr.write("scapygen: scapy not importable (apt-get install python3-scapy): %s\n" % e)
    sys.exit(3)

MTU = 1024
PAIRS = 8
PSN_MASK = (1 << 24) - 1

# RC opcodes (IBA Vol. 1 table 38).
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY = 0x00, 0x01, 0x02, 0x04
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY = 0x06, 0x07, 0x08, 0x0A
READ_REQUEST = 0x0C
READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY = 0x0D, 0x0E, 0x0F, 0x10
ACK = 0x11


class RETH(Packet):
    """RDMA Extended Transport Header (IBA Vol. 1 9.3.3)."""
    name = "RETH"
    fields_desc = [
        XLongField("va", 0),
        XIntField("rkey", 0),
        IntField("dmalen", 0),
    ]


class Pair:
    def __init__(self, rnd, p):
        self.req_mac = "02:00:0b:%02x:00:01" % p
        self.resp_mac = "02:00:0b:%02x:00:02" % p
        self.req_ip = "10.3.%d.1" % p
        self.resp_ip = "10.3.%d.2" % p
        self.req_qpn = rnd.randrange(0x100, 1 << 24)
        self.resp_qpn = rnd.randrange(0x100, 1 << 24)
        self.sport = rnd.randrange(49152, 65536)
        self.psn = rnd.randrange(0, 1 << 24)
        self.msn = 0
        self.rkey = rnd.randrange(0, 1 << 32)
        self.va = 0x7F0000000000 + (p << 32)
        self.payload = [rnd.randbytes(MTU) for _ in range(4)]
        self.msg = []  # the packets (lambdas) left in the message in progress
        self.ipid = [0, 0]

    def frame(self, from_req, opcode, psn, ext, payload, ackreq=0, solicited=0):
        d = 0 if from_req else 1
        self.ipid[d] = (self.ipid[d] + 1) & 0xFFFF
        if from_req:
            l2 = Ether(src=self.req_mac, dst=self.resp_mac)
            ip = IP(src=self.req_ip, dst=self.resp_ip, id=self.ipid[d], flags="DF", ttl=64)
            dqpn = self.resp_qpn
        else:
            l2 = Ether(src=self.resp_mac, dst=self.req_mac)
            ip = IP(src=self.resp_ip, dst=self.req_ip, id=self.ipid[d], flags="DF", ttl=64)
            dqpn = self.req_qpn
        pkt = l2 / ip / UDP(sport=self.sport, dport=4791, chksum=0) / \
            BTH(opcode=opcode, solicited=solicited, pkey=0xFFFF, dqpn=dqpn, ackreq=ackreq, psn=psn)
        if ext is not None:
            pkt = pkt / ext
        if payload is not None:
            pkt = pkt / Raw(payload)
        return pkt

    def start(self, rnd):
        """Queues the packets of a new message."""
        x = rnd.random()
        n = 1 if rnd.random() < 0.25 else rnd.randint(2, 8)
        psn0 = self.psn
        self.psn = (self.psn + n) & PSN_MASK
        va = self.va + rnd.randrange(0, 1 << 20, MTU)
        psns = [(psn0 + i) & PSN_MASK for i in range(n)]
        pl = self.payload
        q = []
        if x < 0.4:  # RDMA WRITE, then ACK
            for i in range(n):
                if n == 1:
                    op = WRITE_ONLY
                elif i == 0:
                    op = WRITE_FIRST
                elif i == n - 1:
                    op = WRITE_LAST
                else:
                    op = WRITE_MIDDLE
                ext = RETH(va=va, rkey=self.rkey, dmalen=n * MTU) if i == 0 else None
                last = i == n - 1
                q.append((True, op, psns[i], ext, pl[i % 4], int(last), 0))
            q.append(("ack", psns[-1]))
        elif x < 0.7:  # RDMA READ: request, then responses
            q.append((True, READ_REQUEST, psn0, RETH(va=va, rkey=self.rkey, dmalen=n * MTU), None, 1, 0))
            for i in range(n):
                if n == 1:
                    op = READ_RESP_ONLY
                elif i == 0:
                    op = READ_RESP_FIRST
                elif i == n - 1:
                    op = READ_RESP_LAST
                else:
                    op = READ_RESP_MIDDLE
                q.append(("read", op, psns[i], pl[(i + 1) % 4], i == 0))
        else:  # SEND of 1 to 3 packets, then ACK
            n = min(n, 1 + n % 3)
            self.psn = (psn0 + n) & PSN_MASK
            for i in range(n):
                if n == 1:
                    op = SEND_ONLY
                elif i == 0:
                    op = SEND_FIRST
                elif i == n - 1:
                    op = SEND_LAST
                else:
                    op = SEND_MIDDLE
                last = i == n - 1
                q.append((True, op, psns[i], None, pl[(i + 2) % 4], int(last), int(last)))
            q.append(("ack", psns[n - 1]))
        self.msg = q

    def next(self, rnd):
        if not self.msg:
            self.start(rnd)
        item = self.msg.pop(0)
        if item[0] == "ack":
            self.msn = (self.msn + 1) & PSN_MASK
            return self.frame(False, ACK, item[1], AETH(syndrome=0x1F, msn=self.msn), None)
        if item[0] == "read":
            _, op, psn, payload, first = item
            if first:
                self.msn = (self.msn + 1) & PSN_MASK
            ext = None
            if op in (READ_RESP_FIRST, READ_RESP_LAST, READ_RESP_ONLY):
                ext = AETH(syndrome=0x1F, msn=self.msn)
            return self.frame(False, op, psn, ext, payload)
        return self.frame(*item)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, required=True, help="packets")
    ap.add_argument("-o", required=True, help="output pcap")
    ap.add_argument("-seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    pairs = [Pair(rnd, p) for p in range(PAIRS)]
    # Written 4 MiB at a time, as gencap writes (bufio, 4 MiB): written
    # in PcapWriter's own small pieces, the same 17 MB read back more
    # slowly on the bench's machine (ext4, Linux 6.18; dd 6 ms of CPU
    # against 5 for a cp of the file, rocetap 15 ms against 13), likely
    # because the page cache then holds it in smaller folios, and
    # section 2 would compare the two files' pages, not their packets.
    out = open(a.o, "wb", buffering=4 << 20)
    w = PcapWriter(out, linktype=1)
    t = 1767312000.0  # 2026-01-02 00:00:00 UTC
    for _ in range(a.n):
        pkt = rnd.choice(pairs).next(rnd)
        t += rnd.choice((1e-6, 2e-6))
        pkt.time = round(t, 6)
        w.write(pkt)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
