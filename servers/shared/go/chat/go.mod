module wscbench/chat

go 1.24
