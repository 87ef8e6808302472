//! The argument types and value parsers that several commands share: which servers a command
//! applies to, an enumerated dimension's names, a table format, a size. Each command owns its
//! own arguments (its `*Args`, in its file); `cli.rs` only assembles them.

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use wscbench_results::{Language, Transport};

/// `--transport` as given, each once, in order; `ws` when not given (`run` and `verify`).
pub fn transports_asked(given: &[Transport]) -> Vec<Transport> {
    let mut transports: Vec<Transport> = Vec::new();
    for &t in given {
        if !transports.contains(&t) {
            transports.push(t);
        }
    }
    if transports.is_empty() {
        transports.push(Transport::Ws);
    }
    transports
}

/// Which servers a command applies to.
#[derive(Debug, Clone, Args, Default)]
pub struct SelectArgs {
    /// A server id such as profile-b/go (repeatable)
    #[arg(long = "server", value_name = "ID")]
    pub servers: Vec<String>,
    /// Only servers of this profile: a (frameworks) or b (minimal / stdlib) (repeatable)
    #[arg(long = "profile", value_name = "a|b", value_parser = ["a", "b", "A", "B"])]
    pub profiles: Vec<String>,
    /// Only servers in this language: go, rust or zig; javascript or python for the extra
    /// group (repeatable)
    #[arg(long = "lang", value_name = "LANG", value_parser = one_of(Language::ALL, Language::as_str))]
    pub langs: Vec<Language>,
    /// Only servers of this group: extra (servers/extra: never run unless named here or by
    /// --server), a or b (repeatable)
    #[arg(long = "group", value_name = "extra|a|b", value_parser = ["extra", "a", "b"])]
    pub groups: Vec<String>,
}

impl SelectArgs {
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
            && self.profiles.is_empty()
            && self.langs.is_empty()
            && self.groups.is_empty()
    }

    pub fn selection(&self) -> wscbench_engine::catalog::Selection {
        wscbench_engine::catalog::Selection {
            ids: self.servers.clone(),
            profiles: self
                .profiles
                .iter()
                .map(|p| p.to_ascii_lowercase())
                .collect(),
            languages: self.langs.iter().map(|l| l.as_str().to_string()).collect(),
            groups: self.groups.clone(),
        }
    }
}

/// A parser that accepts exactly the names of an enumerated dimension, listing them in `--help`.
pub fn one_of<T>(all: &'static [T], name: fn(T) -> &'static str) -> impl TypedValueParser<Value = T>
where
    T: Copy + Send + Sync + 'static + std::str::FromStr,
    T::Err: std::fmt::Debug,
{
    PossibleValuesParser::new(all.iter().map(move |v| name(*v)))
        .map(|s| s.parse::<T>().expect("one of the possible values"))
}

/// A table format: terminal, markdown or json.
pub fn parse_format(s: &str) -> Result<wscbench_report::Format, String> {
    s.parse::<wscbench_report::Format>()
        .map_err(|e| e.to_string())
}

/// Parses a size such as `512m`, `1g`, `256MiB` or a plain number of bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(digits_end);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a size such as 512m or 1g"))?;
    let factor: u64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("{s:?}: unknown unit {unit:?}; use b, k, m or g")),
    };
    let bytes = (number * factor as f64).round() as u64;
    // Docker refuses limits under 6 MiB.
    if bytes < 6 << 20 {
        return Err(format!("{s:?} is below Docker's 6 MiB minimum"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_dockers_memory_flag() {
        assert_eq!(parse_bytes("512m"), Ok(512 << 20));
        assert_eq!(parse_bytes("1g"), Ok(1 << 30));
        assert_eq!(parse_bytes("256MiB"), Ok(256 << 20));
        assert_eq!(parse_bytes("1.5g"), Ok(3 << 29));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("512x").is_err());
        assert!(parse_bytes("1m").unwrap_err().contains("6 MiB"));
    }
}
