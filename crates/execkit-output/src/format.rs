//! The size formatters, all of execkit's: [`size`] for configured sizes (O22: `70 KiB`,
//! `100 MiB`, `1.5 GiB`), [`kib`] for a measured payload in KiB with one decimal (`23.4 KiB`),
//! and [`measured`] for a measured payload in the unit that fits (`512 B`, `1.5 MiB`).

const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];

/// Binary units, one decimal only when the value is not a whole unit.
pub fn size(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut unit = 1024u64;
    let mut index = 0;
    while index + 1 < UNITS.len() && bytes / 1024 >= unit {
        unit *= 1024;
        index += 1;
    }
    let name = UNITS[index];
    if bytes.is_multiple_of(unit) {
        return format!("{} {name}", bytes / unit);
    }
    let tenths = (bytes as u128 * 10 + unit as u128 / 2) / unit as u128;
    if tenths.is_multiple_of(10) {
        format!("{} {name}", tenths / 10)
    } else {
        format!("{}.{} {name}", tenths / 10, tenths % 10)
    }
}

/// Kibibytes with exactly one decimal, whatever the size: `0.5 KiB`, `23.4 KiB`, `2048.0 KiB`.
pub fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// A measured size in the unit that fits, one decimal from KiB up: `512 B`, `23.4 KiB`,
/// `1.5 MiB`.
pub fn measured(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        kib(bytes)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::{kib, measured, size};

    #[test]
    fn measured_picks_the_unit() {
        assert_eq!(measured(512), "512 B");
        assert_eq!(measured(23_962), "23.4 KiB");
        assert_eq!(measured(3 << 19), "1.5 MiB");
    }

    #[test]
    fn kib_has_one_decimal() {
        assert_eq!(kib(23_962), "23.4 KiB");
        assert_eq!(kib(1024), "1.0 KiB");
        assert_eq!(kib(512), "0.5 KiB");
    }

    #[test]
    fn whole_and_fractional_units() {
        assert_eq!(size(70 * 1024), "70 KiB");
        assert_eq!(size(100 * 1024 * 1024), "100 MiB");
        assert_eq!(size(3 * 512 * 1024 * 1024), "1.5 GiB");
        assert_eq!(size(1024), "1 KiB");
        assert_eq!(size(1000), "1000 bytes");
        assert_eq!(size(1024 * 1024 * 1024 * 1024), "1 TiB");
        assert_eq!(size(1536), "1.5 KiB");
    }
}
