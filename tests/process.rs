//! Integration tests: process.
