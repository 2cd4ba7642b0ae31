"""Agent-side adapters: the `canon` CLI, the MCP server, hooks and `canon init` (SPEC §11)."""
