//! Integration tests: bash.
