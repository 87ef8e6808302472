//! How numbers read in a table: units, thousands separators and precision. Every
//! figure a table shows is formatted here, so all renderers print the same text.

const MIB: f64 = 1024.0 * 1024.0;

/// `1234567` → `1,234,567`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .map(|group| std::str::from_utf8(group).expect("ASCII digits"))
        .collect();
    groups.reverse();
    groups.join(",")
}

/// A per-second rate: whole numbers with separators from 100 up, one decimal below.
pub(crate) fn rate(per_s: f64) -> String {
    if per_s >= 99.95 {
        count(per_s.round() as u64)
    } else {
        format!("{per_s:.1}")
    }
}

/// Memory, always in MiB so that a column compares at a glance: `12.3 MiB`.
pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB)
}

/// A size in the largest binary unit that keeps it at or above one: `7.9 MiB`.
pub(crate) fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// CPU in percent of one core: `143.2%`.
pub(crate) fn cpu(percent: f64) -> String {
    format!("{percent:.1}%")
}

/// A latency: `3.4 ms`.
pub(crate) fn ms(ms: f64) -> String {
    format!("{ms:.1} ms")
}

/// CPU time in ms with two significant decimals below 10: `1.63 ms`, `12.4 ms` (the load
/// curve's CPU per 1,000 deliveries).
pub(crate) fn cpu_ms(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// A ratio from 0 to 1 as a percentage with two decimals: `0.0123` → `1.23%`.
pub(crate) fn ratio_percent(ratio: f64) -> String {
    format!("{:.2}%", ratio * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_get_a_separator_every_three_digits() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
    }

    #[test]
    fn rates_drop_their_decimals_from_one_hundred_up() {
        assert_eq!(rate(42.25), "42.2");
        assert_eq!(rate(99.96), "100");
        assert_eq!(rate(12345.6), "12,346");
    }

    #[test]
    fn sizes_pick_the_largest_unit_that_stays_above_one() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(2048), "2.0 KiB");
        assert_eq!(size(8_283_750), "7.9 MiB");
        assert_eq!(size(1024 * 1024 * 1024), "1.0 GiB");
    }

    #[test]
    fn memory_cpu_latency_and_drop_rate_keep_one_or_two_decimals() {
        assert_eq!(mib(12 * 1024 * 1024 + 300 * 1024), "12.3 MiB");
        assert_eq!(cpu(143.24), "143.2%");
        assert_eq!(ms(3.46), "3.5 ms");
        assert_eq!(ratio_percent(0.01234), "1.23%");
    }
}
