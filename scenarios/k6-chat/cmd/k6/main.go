// Command k6 is k6 v1.8.1 with the wscbench chat extension (k6/x/chat)
// compiled in: what xk6 would build, without needing xk6 or GitHub.
package main

import (
	"go.k6.io/k6/cmd"

	_ "wscbench/k6-chat"
)

func main() {
	cmd.Execute()
}
