package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRDMADeviceError: capture -i mlx5_0 on the AF_PACKET build says it
// is an RDMA device, how to capture it, and names its netdev; a Soft-RoCE
// device names its parent interface.
func TestRDMADeviceError(t *testing.T) {
	root := t.TempDir()
	old := sysInfiniBand
	sysInfiniBand = root
	t.Cleanup(func() { sysInfiniBand = old })
	mk := func(p string, data string) {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if data != "" {
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("mlx5_0/device/net/ens1f0np0", "")
	mk("rxe0/ports/1/gid_attrs/ndevs/0", "veth0\n")
	tests := []struct {
		dev  string
		want []string
	}{
		{"mlx5_0", []string{`"mlx5_0" is an RDMA device`, "AF_PACKET", "make build-libpcap", "rocetap-libpcap capture -i mlx5_0", "sniffer", "ens1f0np0"}},
		{"rxe0", []string{`"rxe0" is an RDMA device`, "-i veth0"}},
	}
	for _, tt := range tests {
		_, err := OpenLive(LiveOptions{Interface: tt.dev, Backend: "afpacket"})
		var re *RDMADeviceError
		if !errors.As(err, &re) {
			t.Fatalf("%s: %v, want an RDMADeviceError", tt.dev, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tt.dev, err, w)
			}
		}
	}
	if _, ok := rdmaDevice("../etc"); ok {
		t.Error("a path is not a device name")
	}
	var ue *UnknownInterfaceError
	if _, err := OpenLive(LiveOptions{Interface: "nosuch0", Backend: "afpacket"}); !errors.As(err, &ue) {
		t.Errorf("nosuch0: %v, want UnknownInterfaceError", err)
	}
}
