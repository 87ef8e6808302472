//go:build !linux

package chat

import (
	"net"
	"syscall"
)

// tcpEstablished cannot look at the TCP state off Linux: a paused slow
// reader then notes the server's close only when it reads again.
func tcpEstablished(net.Conn) bool { return true }

// socketControl sets nothing off Linux: a slow client there has the
// kernel's receive buffer and segment size.
func (o *slowOptions) socketControl() func(network, address string, c syscall.RawConn) error {
	return nil
}
