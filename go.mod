module github.com/rocetap/rocetap

go 1.25.0

require (
	github.com/gopacket/gopacket v1.7.7
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	golang.org/x/net v0.55.0
	golang.org/x/sys v0.45.0
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
