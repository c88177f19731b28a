//! The one formatter for configured sizes (O22): `70 KiB`, `100 MiB`, `1.5 GiB`.

/// Binary units, one decimal only when the value is not a whole unit.
pub fn size(bytes: u64) -> String {
    let _ = bytes;
    todo!()
}
