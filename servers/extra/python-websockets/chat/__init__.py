"""The chat core of docs/protocol.md: protocol, limiter, stats, hub; client is the connection."""
