"""Task-store tests: one contract suite over every backend, plus backend-specific tests."""
