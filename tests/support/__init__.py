"""Test-only reference implementations (never imported by the package)."""
