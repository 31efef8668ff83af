module github.com/rocetap/rocetap

go 1.25.0

require github.com/gopacket/gopacket v1.7.7
