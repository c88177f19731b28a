//! The bash tool.
