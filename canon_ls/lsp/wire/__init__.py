"""The wire: stdio, message checking, positions, logging to the client."""
