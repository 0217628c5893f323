package herdrsim

import (
	"fmt"
	"os"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// useRelease applies --herdr-version and --protocol: a simulated release
// (0.8.2, 0.9.x) behaves as that release, with its protocol unless
// --protocol names another; --protocol 22 alone is the newest 0.9; any
// other protocol keeps the 0.8.2 world with that protocol's pong, and a
// version that is not simulated is only reported by ping.
func useRelease(srv *sockettest.Server, version string, protocol uint) (int, error) {
	if version == "" {
		switch {
		case protocol == 22:
			version = sockettest.NewestHerdr
		case protocol == 0 && os.Getenv(sockettest.EnvHerdrVersion) != "":
			version = os.Getenv(sockettest.EnvHerdrVersion)
		}
	}
	if version != "" {
		if _, err := sockettest.HerdrRelease(version); err == nil {
			if err := srv.UseHerdr(version); err != nil {
				return 2, err
			}
			if protocol != 0 && uint32(protocol) != srv.Protocol {
				srv.Protocol = uint32(protocol)
				_ = srv.UseProtocol(srv.Protocol)
				srv.Version = version
			}
			return 0, nil
		}
	}
	if protocol == 0 {
		protocol = uint(schema.Protocol)
	}
	if protocol > 1<<31 {
		return 2, fmt.Errorf("--protocol %d is out of range", protocol)
	}
	srv.Protocol = uint32(protocol)
	_ = srv.UseProtocol(srv.Protocol) // known protocols get their pong; others keep 0.8.2's
	if version != "" {
		srv.Version = version
	}
	return 0, nil
}

// clientProtocol is the protocol the CLI verbs speak, as the herdr CLI of
// the simulated release does: $HERDR_SIM_VERSION's, else 20.
func clientProtocol() uint32 {
	if r, err := sockettest.HerdrRelease(os.Getenv(sockettest.EnvHerdrVersion)); err == nil {
		return r.Protocol
	}
	return schema.Protocol
}
