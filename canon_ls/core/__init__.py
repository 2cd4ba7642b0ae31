"""The canon store: pure Python, no editor or MCP imports (SPEC §1)."""
