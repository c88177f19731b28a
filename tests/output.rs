//! Integration tests: output.
