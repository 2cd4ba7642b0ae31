"""The server's state (folders, stores, checks, signals) and the features that own state."""
