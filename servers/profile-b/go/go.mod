module github.com/wscbench/servers/profile-b/go

go 1.24

require (
	github.com/gorilla/websocket v1.5.3
	wscbench/chat v0.0.0
)

replace wscbench/chat => ../../shared/go/chat
