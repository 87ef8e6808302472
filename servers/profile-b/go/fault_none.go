//go:build !fault_echo

package main

// echoChatToSender is false in every real build; see fault_echo.go.
const echoChatToSender = false
