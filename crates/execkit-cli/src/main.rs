//! The execkit binary.
fn main() {}
