"""Start-up: the early initialize answer and the answers given while a store loads."""
