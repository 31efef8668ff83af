package decode

import "testing"

func TestAppendMADInfo(t *testing.T) {
	tests := []struct {
		class, method uint8
		attr          uint16
		want          string
	}{
		{MgmtClassSubnLIDRouted, MADMethodGet, SMPAttrNodeInfo, "SubnGet(NodeInfo)"},
		{MgmtClassSubnDirectRoute, MADMethodGetResp, SMPAttrPortInfo, "SubnGetResp(PortInfo)"},
		{MgmtClassSubnLIDRouted, MADMethodTrap, SMPAttrNotice, "SubnTrap(Notice)"},
		{MgmtClassSubnLIDRouted, MADMethodTrapRepress, SMPAttrNotice, "SubnTrapRepress(Notice)"},
		{MgmtClassSubnLIDRouted, MADMethodSend, SMPAttrNodeInfo, "Subn0x03(NodeInfo)"},
		{MgmtClassSubnLIDRouted, MADMethodGet, 0x0013, "SubnGet(0x0013)"},
		{MgmtClassSubnAdm, MADMethodGetTableResp, SAAttrPathRecord, "SubnAdmGetTableResp(PathRecord)"},
		{MgmtClassSubnAdm, MADMethodGet, SAAttrGUIDInfoRecord, "SubnAdmGet(GuidInfoRecord)"},
		{MgmtClassSubnAdm, MADMethodDeleteResp, SAAttrMCMemberRecord, "SubnAdmDeleteResp(MCMemberRecord)"},
		{MgmtClassSubnAdm, MADMethodTrap, SAAttrNodeRecord, "SubnAdm0x05(NodeRecord)"},
		{MgmtClassPerf, MADMethodGet, PMAAttrPortCounters, "PerfGet(PortCounters)"},
		{MgmtClassPerf, MADMethodGetResp, PMAAttrPortCountersExtended, "PerfGetResp(PortCountersExtended)"},
		{MgmtClassPerf, MADMethodGetTable, PMAAttrPortCounters, "Perf0x12(PortCounters)"},
		{MgmtClassBM, MADMethodSend, 0x0011, "BM Send(0x0011)"},
		{MgmtClassDevMgt, MADMethodGetResp, 0x0001, "DEV_MGT GetResp(0x0001)"},
		{MgmtClassSNMP, MADMethodSend, 0x0010, "SNMP Send(0x0010)"},
		{0x09, MADMethodGet, 0xFF00, "VENDOR Get(0xff00)"},
		{0x30, MADMethodGetResp, 0x0010, "VENDOR GetResp(0x0010)"},
		{0x10, 0x7F, 0, "APP 0x7f(0x0000)"},
		{MgmtClassCC, MADMethodGet, 0x0011, "CC Get(0x0011)"},
		{0x50, MADMethodGet, 0x0011, "RESERVED Get(0x0011)"},
		{0x02, MADMethodGet, 0x0011, "RESERVED Get(0x0011)"},
	}
	for _, tt := range tests {
		if got := string(AppendMADInfo(nil, tt.class, tt.method, tt.attr)); got != tt.want {
			t.Errorf("AppendMADInfo(0x%02x, 0x%02x, 0x%04x) = %q, want %q", tt.class, tt.method, tt.attr, got, tt.want)
		}
	}
}

func TestMADAttrName(t *testing.T) {
	tests := []struct {
		class uint8
		attr  uint16
		want  string
	}{
		{MgmtClassSubnLIDRouted, SMPAttrPKeyTable, "P_KeyTable"},
		{MgmtClassSubnDirectRoute, SMPAttrLedInfo, "LedInfo"},
		{MgmtClassSubnAdm, SAAttrInformInfoRecord, "InformInfoRecord"},
		{MgmtClassPerf, PMAAttrPortSamplesResult, "PortSamplesResult"},
		{MgmtClassCM, CMAttrREQ, "ConnectRequest"},
		{MgmtClassCM, 0x001B, "0x001b"},
		{MgmtClassBM, 0x0011, "0x0011"},
		{MgmtClassSubnLIDRouted, SAAttrPathRecord, "0x0035"}, // an SA attribute is not an SMP one
	}
	for _, tt := range tests {
		if got := MADAttrName(tt.class, tt.attr); got != tt.want {
			t.Errorf("MADAttrName(0x%02x, 0x%04x) = %q, want %q", tt.class, tt.attr, got, tt.want)
		}
	}
}

func TestAppendMADStatus(t *testing.T) {
	tests := []struct {
		class  uint8
		status uint16
		want   string
	}{
		{MgmtClassSubnLIDRouted, 0, "ok"},
		{MgmtClassSubnDirectRoute, 0x8000, "ok"}, // the D bit is no error
		{MgmtClassSubnLIDRouted, 0x8000, "class status 0x80"},
		{MgmtClassSubnLIDRouted, MADStatusMethodUnsup, "method not supported"},
		{MgmtClassPerf, MADStatusMethodAttrUnsup, "method/attribute not supported"},
		{MgmtClassSubnDirectRoute, 0x8000 | MADStatusInvalidAttrValue, "invalid attribute or modifier value"},
		{MgmtClassSubnAdm, 0x0300, "ERR_NO_RECORDS"},
		{MgmtClassSubnAdm, 0x0700 | MADStatusBusy, "busy, ERR_REQ_DENIED"},
		{MgmtClassSubnAdm, 0x0900, "class status 0x09"},
		{MgmtClassSubnLIDRouted, MADStatusRedirect | MADStatusBadVersion, "redirect, bad version"},
		{MgmtClassSubnLIDRouted, 0x0020, "reserved bits 0x20"},
	}
	for _, tt := range tests {
		if got := string(AppendMADStatus(nil, tt.class, tt.status)); got != tt.want {
			t.Errorf("AppendMADStatus(0x%02x, 0x%04x) = %q, want %q", tt.class, tt.status, got, tt.want)
		}
	}
}

func TestMADClassMethodString(t *testing.T) {
	for m, want := range map[uint8]string{MADMethodGet: "Get", MADMethodGetTableResp: "GetTableResp", 0x08: ""} {
		if got := MADClassMethodString(MgmtClassBM, m); got != want {
			t.Errorf("MADClassMethodString(BM, 0x%02x) = %q, want %q", m, got, want)
		}
	}
	if got := MADClassMethodString(MgmtClassSubnAdm, MADMethodGetTraceTable); got != "SubnAdmGetTraceTable" {
		t.Errorf("SA GetTraceTable = %q", got)
	}
}
