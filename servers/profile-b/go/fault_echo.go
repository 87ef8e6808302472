//go:build fault_echo

package main

// Test only: `go build -tags fault_echo` makes a deliberately broken server
// whose hub also delivers each chat to its sender, against docs/protocol.md.
// It lets the tests of `wscbench verify` prove that the chat check catches a
// faulty server. Never benchmark this build.
const echoChatToSender = true
