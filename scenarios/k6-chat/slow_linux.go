//go:build linux

package chat

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// tcpEstablished: c's TCP state is still ESTABLISHED (TCP_INFO), i.e. no FIN
// or reset has come from the server. Anything that is not a TCP connection,
// or a failed look, counts as established: only a seen close is reported.
func tcpEstablished(c net.Conn) bool {
	raw, ok := tcpConnOf(c)
	if !ok {
		return true
	}
	state := uint8(unix.BPF_TCP_ESTABLISHED)
	_ = raw.Control(func(fd uintptr) {
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			state = info.State
		}
	})
	return state == unix.BPF_TCP_ESTABLISHED
}

// socketControl is a net.Dialer Control function that sets a slow client's
// SO_RCVBUF and TCP_MAXSEG (those not 0) before the connect; nil when there
// is nothing to set.
func (o *slowOptions) socketControl() func(network, address string, c syscall.RawConn) error {
	if o == nil || (o.recvBufferBytes == 0 && o.maxSegmentBytes == 0) {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if o.recvBufferBytes > 0 {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, o.recvBufferBytes)
			}
			if o.maxSegmentBytes > 0 && serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, o.maxSegmentBytes)
			}
		})
		return errors.Join(err, serr)
	}
}
