#!/usr/bin/python3
"""libibmad oracle for PortInfo and Notice (decode/libibmad_test.go).

Decodes SMP attribute data with rdma-core's libibmad (Debian libibmad5,
rdma-core 44) through ctypes: mad_decode_field(buf, field, &val) for every
IB_PORT_*_F and IB_NOTICE_*_F field libibmad declares. Only the shared
library is needed; the field numbers below are the enum MAD_FIELDS values
of infiniband/mad.h (libibmad-dev 44.0-2), each with the header line it
comes from, and the script checks each against mad_field_name() so that a
wrong number fails loudly.

Input, one attribute a line: "portinfo <128 hex digits>" or
"notice <128 hex digits>" (the 64-byte SMP data).
Output, one line per input line: "Name=value ..." with libibmad's field
names, integers in decimal, fields wider than 64 bits in hex.
Exit status 3 when libibmad.so.5 cannot be loaded.
"""
import ctypes
import sys

# enum MAD_FIELDS (/usr/include/infiniband/mad.h, libibmad-dev 44.0-2)
IB_PORT_MKEY_F = 27  # mad.h:392
IB_PORT_GID_PREFIX_F = 28  # mad.h:393
IB_PORT_LID_F = 29  # mad.h:394
IB_PORT_SMLID_F = 30  # mad.h:395
IB_PORT_CAPMASK_F = 31  # mad.h:396
IB_PORT_DIAG_F = 32  # mad.h:397
IB_PORT_MKEY_LEASE_F = 33  # mad.h:398
IB_PORT_LOCAL_PORT_F = 34  # mad.h:399
IB_PORT_LINK_WIDTH_ENABLED_F = 35  # mad.h:400
IB_PORT_LINK_WIDTH_SUPPORTED_F = 36  # mad.h:401
IB_PORT_LINK_WIDTH_ACTIVE_F = 37  # mad.h:402
IB_PORT_LINK_SPEED_SUPPORTED_F = 38  # mad.h:403
IB_PORT_STATE_F = 39  # mad.h:404
IB_PORT_PHYS_STATE_F = 40  # mad.h:405
IB_PORT_LINK_DOWN_DEF_F = 41  # mad.h:406
IB_PORT_MKEY_PROT_BITS_F = 42  # mad.h:407
IB_PORT_LMC_F = 43  # mad.h:408
IB_PORT_LINK_SPEED_ACTIVE_F = 44  # mad.h:409
IB_PORT_LINK_SPEED_ENABLED_F = 45  # mad.h:410
IB_PORT_NEIGHBOR_MTU_F = 46  # mad.h:411
IB_PORT_SMSL_F = 47  # mad.h:412
IB_PORT_VL_CAP_F = 48  # mad.h:413
IB_PORT_INIT_TYPE_F = 49  # mad.h:414
IB_PORT_VL_HIGH_LIMIT_F = 50  # mad.h:415
IB_PORT_VL_ARBITRATION_HIGH_CAP_F = 51  # mad.h:416
IB_PORT_VL_ARBITRATION_LOW_CAP_F = 52  # mad.h:417
IB_PORT_INIT_TYPE_REPLY_F = 53  # mad.h:418
IB_PORT_MTU_CAP_F = 54  # mad.h:419
IB_PORT_VL_STALL_COUNT_F = 55  # mad.h:420
IB_PORT_HOQ_LIFE_F = 56  # mad.h:421
IB_PORT_OPER_VLS_F = 57  # mad.h:422
IB_PORT_PART_EN_INB_F = 58  # mad.h:423
IB_PORT_PART_EN_OUTB_F = 59  # mad.h:424
IB_PORT_FILTER_RAW_INB_F = 60  # mad.h:425
IB_PORT_FILTER_RAW_OUTB_F = 61  # mad.h:426
IB_PORT_MKEY_VIOL_F = 62  # mad.h:427
IB_PORT_PKEY_VIOL_F = 63  # mad.h:428
IB_PORT_QKEY_VIOL_F = 64  # mad.h:429
IB_PORT_GUID_CAP_F = 65  # mad.h:430
IB_PORT_CLIENT_REREG_F = 66  # mad.h:431
IB_PORT_MCAST_PKEY_SUPR_ENAB_F = 67  # mad.h:432
IB_PORT_SUBN_TIMEOUT_F = 68  # mad.h:433
IB_PORT_RESP_TIME_VAL_F = 69  # mad.h:434
IB_PORT_LOCAL_PHYS_ERR_F = 70  # mad.h:435
IB_PORT_OVERRUN_ERR_F = 71  # mad.h:436
IB_PORT_MAX_CREDIT_HINT_F = 72  # mad.h:437
IB_PORT_LINK_ROUND_TRIP_F = 73  # mad.h:438
IB_NOTICE_IS_GENERIC_F = 110  # mad.h:501
IB_NOTICE_TYPE_F = 111  # mad.h:502
IB_NOTICE_PRODUCER_F = 112  # mad.h:503
IB_NOTICE_TRAP_NUMBER_F = 113  # mad.h:504
IB_NOTICE_ISSUER_LID_F = 114  # mad.h:505
IB_NOTICE_TOGGLE_F = 115  # mad.h:506
IB_NOTICE_COUNT_F = 116  # mad.h:507
IB_NOTICE_DATA_DETAILS_F = 117  # mad.h:508
IB_NOTICE_DATA_LID_F = 118  # mad.h:509
IB_NOTICE_DATA_144_LID_F = 119  # mad.h:510
IB_NOTICE_DATA_144_CAPMASK_F = 120  # mad.h:511
IB_PORT_CAPMASK2_F = 323  # mad.h:813
IB_PORT_LINK_SPEED_EXT_ACTIVE_F = 324  # mad.h:814
IB_PORT_LINK_SPEED_EXT_SUPPORTED_F = 325  # mad.h:815
IB_PORT_LINK_SPEED_EXT_ENABLED_F = 326  # mad.h:816

# Which fields belong to which attribute, with the name libibmad gives each.
PORTINFO = [
    (IB_PORT_MKEY_F, "Mkey"),
    (IB_PORT_GID_PREFIX_F, "GidPrefix"),
    (IB_PORT_LID_F, "Lid"),
    (IB_PORT_SMLID_F, "SMLid"),
    (IB_PORT_CAPMASK_F, "CapMask"),
    (IB_PORT_DIAG_F, "DiagCode"),
    (IB_PORT_MKEY_LEASE_F, "MkeyLeasePeriod"),
    (IB_PORT_LOCAL_PORT_F, "LocalPort"),
    (IB_PORT_LINK_WIDTH_ENABLED_F, "LinkWidthEnabled"),
    (IB_PORT_LINK_WIDTH_SUPPORTED_F, "LinkWidthSupported"),
    (IB_PORT_LINK_WIDTH_ACTIVE_F, "LinkWidthActive"),
    (IB_PORT_LINK_SPEED_SUPPORTED_F, "LinkSpeedSupported"),
    (IB_PORT_STATE_F, "LinkState"),
    (IB_PORT_PHYS_STATE_F, "PhysLinkState"),
    (IB_PORT_LINK_DOWN_DEF_F, "LinkDownDefState"),
    (IB_PORT_MKEY_PROT_BITS_F, "ProtectBits"),
    (IB_PORT_LMC_F, "LMC"),
    (IB_PORT_LINK_SPEED_ACTIVE_F, "LinkSpeedActive"),
    (IB_PORT_LINK_SPEED_ENABLED_F, "LinkSpeedEnabled"),
    (IB_PORT_NEIGHBOR_MTU_F, "NeighborMTU"),
    (IB_PORT_SMSL_F, "SMSL"),
    (IB_PORT_VL_CAP_F, "VLCap"),
    (IB_PORT_INIT_TYPE_F, "InitType"),
    (IB_PORT_VL_HIGH_LIMIT_F, "VLHighLimit"),
    (IB_PORT_VL_ARBITRATION_HIGH_CAP_F, "VLArbHighCap"),
    (IB_PORT_VL_ARBITRATION_LOW_CAP_F, "VLArbLowCap"),
    (IB_PORT_INIT_TYPE_REPLY_F, "InitReply"),
    (IB_PORT_MTU_CAP_F, "MtuCap"),
    (IB_PORT_VL_STALL_COUNT_F, "VLStallCount"),
    (IB_PORT_HOQ_LIFE_F, "HoqLife"),
    (IB_PORT_OPER_VLS_F, "OperVLs"),
    (IB_PORT_PART_EN_INB_F, "PartEnforceInb"),
    (IB_PORT_PART_EN_OUTB_F, "PartEnforceOutb"),
    (IB_PORT_FILTER_RAW_INB_F, "FilterRawInb"),
    (IB_PORT_FILTER_RAW_OUTB_F, "FilterRawOutb"),
    (IB_PORT_MKEY_VIOL_F, "MkeyViolations"),
    (IB_PORT_PKEY_VIOL_F, "PkeyViolations"),
    (IB_PORT_QKEY_VIOL_F, "QkeyViolations"),
    (IB_PORT_GUID_CAP_F, "GuidCap"),
    (IB_PORT_CLIENT_REREG_F, "ClientReregister"),
    (IB_PORT_MCAST_PKEY_SUPR_ENAB_F, "McastPkeyTrapSuppressionEnabled"),
    (IB_PORT_SUBN_TIMEOUT_F, "SubnetTimeout"),
    (IB_PORT_RESP_TIME_VAL_F, "RespTimeVal"),
    (IB_PORT_LOCAL_PHYS_ERR_F, "LocalPhysErr"),
    (IB_PORT_OVERRUN_ERR_F, "OverrunErr"),
    (IB_PORT_MAX_CREDIT_HINT_F, "MaxCreditHint"),
    (IB_PORT_LINK_ROUND_TRIP_F, "RoundTrip"),
    (IB_PORT_CAPMASK2_F, "CapabilityMask2"),
    (IB_PORT_LINK_SPEED_EXT_ACTIVE_F, "LinkSpeedExtActive"),
    (IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, "LinkSpeedExtSupported"),
    (IB_PORT_LINK_SPEED_EXT_ENABLED_F, "LinkSpeedExtEnabled"),
]
NOTICE = [
    (IB_NOTICE_IS_GENERIC_F, "NoticeIsGeneric"),
    (IB_NOTICE_TYPE_F, "NoticeType"),
    (IB_NOTICE_PRODUCER_F, "NoticeProducerType"),
    (IB_NOTICE_TRAP_NUMBER_F, "NoticeTrapNumber"),
    (IB_NOTICE_ISSUER_LID_F, "NoticeIssuerLID"),
    (IB_NOTICE_TOGGLE_F, "NoticeToggle"),
    (IB_NOTICE_COUNT_F, "NoticeCount"),
    (IB_NOTICE_DATA_DETAILS_F, "NoticeDataDetails"),
    (IB_NOTICE_DATA_LID_F, "NoticeDataLID"),
    (IB_NOTICE_DATA_144_LID_F, "NoticeDataTrap144LID"),
    (IB_NOTICE_DATA_144_CAPMASK_F, "NoticeDataTrap144CapMask"),
]


def load():
    try:
        return ctypes.CDLL("libibmad.so.5")
    except OSError as e:
        sys.stderr.write("libibmad.so.5 cannot be loaded (%s): apt-get install -y libibmad5\n" % e)
        sys.exit(3)


def main():
    lib = load()
    lib.mad_field_name.restype = ctypes.c_char_p
    lib.mad_field_name.argtypes = [ctypes.c_int]
    lib.mad_decode_field.restype = None
    lib.mad_decode_field.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
    tables = {"portinfo": PORTINFO, "notice": NOTICE}
    for table in tables.values():
        for field, name in table:
            got = lib.mad_field_name(field).decode()
            if got != name:
                sys.stderr.write("field %d is %r in this libibmad, not %r: the enum changed\n" % (field, got, name))
                sys.exit(2)
    for line in sys.stdin:
        kind, hexdata = line.split()
        data = bytes.fromhex(hexdata)
        buf = ctypes.create_string_buffer(data + bytes(256 - len(data)), 256)
        out = []
        for field, name in tables[kind]:
            val = ctypes.create_string_buffer(64)  # zeroed; <= 32 bits: a uint32, 64 bits: a uint64, wider: bytes
            lib.mad_decode_field(buf, field, val)
            if name == "NoticeDataDetails":
                out.append("%s=%s" % (name, val.raw[:54].hex()))
            else:
                out.append("%s=%d" % (name, int.from_bytes(val.raw[:8], sys.byteorder)))
        print(" ".join(out))


if __name__ == "__main__":
    main()
