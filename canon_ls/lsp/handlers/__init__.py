"""Request and notification handlers: thin, over one lookup and core."""
