package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sysInfiniBand is where Linux lists RDMA devices (mlx5_0, rxe0, irdma0,
// bnxt_re0, …); tests point it elsewhere.
var sysInfiniBand = "/sys/class/infiniband"

// RDMADevice is an RDMA device and the network interfaces on its ports.
type RDMADevice struct {
	Name   string
	Netdev []string // e.g. ens1f0np0 for mlx5_0; none for a native IB HCA without IPoIB
}

// rdmaDevice returns the RDMA device called name, if there is one.
func rdmaDevice(name string) (RDMADevice, bool) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return RDMADevice{}, false
	}
	dir := filepath.Join(sysInfiniBand, name)
	if _, err := os.Stat(dir); err != nil {
		return RDMADevice{}, false
	}
	d := RDMADevice{Name: name}
	if ents, err := os.ReadDir(filepath.Join(dir, "device", "net")); err == nil {
		for _, e := range ents {
			d.Netdev = append(d.Netdev, e.Name())
		}
	}
	// Soft-RoCE (rxe) devices have no PCI device: their parent netdev is
	// in ports/N/gid_attrs/ndevs/0.
	if len(d.Netdev) == 0 {
		files, _ := filepath.Glob(filepath.Join(dir, "ports", "*", "gid_attrs", "ndevs", "0"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				if n := strings.TrimSpace(string(b)); n != "" && !slices.Contains(d.Netdev, n) {
					d.Netdev = append(d.Netdev, n)
				}
			}
		}
	}
	return d, true
}

// RDMADeviceError says the interface named is an RDMA device, which a
// packet socket cannot capture on, and what to do instead.
type RDMADeviceError struct {
	Device RDMADevice
}

func (e *RDMADeviceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q is an RDMA device (%s), not a network interface: this build captures with AF_PACKET, which never sees RDMA traffic a NIC offloads (ConnectX, BlueField and other RoCE NICs send and receive it in hardware). ",
		e.Device.Name, filepath.Join(sysInfiniBand, e.Device.Name))
	b.WriteString("To capture it: build the libpcap backend (make build-libpcap: libpcap with RDMA sniffer support, which Debian's libpcap0.8 has when built with libibverbs) and run bin/rocetap-libpcap capture -i " + e.Device.Name)
	b.WriteString("; or turn on the NIC's sniffer mode (see \"Capturing RoCE on NICs that offload it\" in the README)")
	if len(e.Device.Netdev) > 0 {
		fmt.Fprintf(&b, ". Its network interface %s carries the traffic the NIC does not offload (and all RoCE on Soft-RoCE, rxe): -i %s",
			strings.Join(e.Device.Netdev, ", "), e.Device.Netdev[0])
	}
	return b.String()
}
