module github.com/wscbench/servers/profile-b/go

go 1.24

require (
	github.com/gorilla/websocket v1.5.3
	github.com/lesismal/nbio v1.6.8
	wscbench/chat v0.0.0
)

require (
	github.com/lesismal/llib v1.2.2 // indirect
	golang.org/x/crypto v0.0.0-20210513122933-cd7d49e622d5 // indirect
	golang.org/x/sys v0.0.0-20210423082822-04245dca01da // indirect
)

replace wscbench/chat => ../../shared/go/chat
