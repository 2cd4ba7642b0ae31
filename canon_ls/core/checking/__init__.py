"""Checking: findings, lints, schema, relations, assets."""
