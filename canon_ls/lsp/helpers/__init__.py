"""Helper processes (check, search, file watching) and how they start."""
