// Command rocetap is a capture and protocol analyzer for RDMA traffic
// (RoCEv2, RoCEv1, InfiniBand). See `rocetap --help`.
package main

import (
	"os"

	"github.com/rocetap/rocetap/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.StdIO())) }
