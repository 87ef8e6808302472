//! Where a row comes from and where it goes: the repetitions of one point in one run
//! ([`Group`]), the metric cell made from them, the order of profiles, languages and
//! scenarios, and the names rows and titles use. Shared by every table builder.

use std::collections::BTreeMap;

use wscbench_results::{FANOUT_DEFAULT_ROOM_SIZE, Language, LoadParam, RunResult, Scenario};

use crate::metrics::Metric;
use crate::stats::Summary;
use crate::table::Cell;

/// Profiles in the order tables appear; others follow alphabetically.
pub(crate) const PROFILES: [&str; 2] = ["a", "b"];

/// The repetitions of one point in one run: one row.
pub(crate) struct Group<'a> {
    /// Every repetition, failed ones included, oldest first.
    pub(crate) results: Vec<&'a RunResult>,
}

impl<'a> Group<'a> {
    pub(crate) fn first(&self) -> &'a RunResult {
        self.results[0]
    }

    pub(crate) fn ok(&self) -> Vec<&'a RunResult> {
        self.results.iter().copied().filter(|r| r.is_ok()).collect()
    }

    fn bound(&self) -> bool {
        self.ok().iter().any(|r| r.loadgen_bound)
    }

    /// A metric over the `ok` repetitions.
    pub(crate) fn summary(&self, metric: &Metric) -> Option<Summary> {
        let values: Vec<f64> = self.ok().iter().filter_map(|r| (metric.value)(r)).collect();
        Summary::of(&values)
    }
}

/// Groups results by point and run, in result order.
pub(crate) fn groups<'a>(results: &[&'a RunResult]) -> Vec<Group<'a>> {
    let mut map: BTreeMap<(wscbench_results::PointKey, &str), Vec<&'a RunResult>> = BTreeMap::new();
    for r in results {
        map.entry((r.point(), r.run_id.as_str()))
            .or_default()
            .push(r);
    }
    map.into_values()
        .map(|mut results| {
            results.sort_by_key(|r| r.repetition.index);
            Group { results }
        })
        .collect()
}

/// The room size of a fan-out result: its sweep's, or the shape's default.
pub(crate) fn room_size(result: &RunResult) -> u64 {
    result
        .load_params
        .get(&LoadParam::RoomSize)
        .map_or(FANOUT_DEFAULT_ROOM_SIZE, |&s| s as u64)
}

/// A metric over a group's repetitions. A figure a busy k6 moves is read over the rounds
/// free of it and competes like any other; where none is free it is read over every round,
/// marked, and does not compete. A figure k6 does not move competes only in a group no
/// round of which was load-generator bound.
pub(crate) fn metric_cell(metric: &Metric, group: &Group) -> Cell {
    // A figure a busy k6 moves is read, as the summary reads it, over the rounds free of
    // the load generator where there are any; every round is shown only when none is free.
    let free: Vec<f64> = group
        .ok()
        .iter()
        .filter(|r| metric.reads_server(r))
        .filter_map(|r| (metric.value)(r))
        .collect();
    let read_free = metric.loadgen_sensitive && !free.is_empty();
    let summary = if read_free {
        Summary::of(&free)
    } else {
        group.summary(metric)
    };
    let mut cell = match summary {
        Some(s) => Cell::summary(&s, metric.format),
        None => Cell::absent(),
    };
    if read_free {
        return cell;
    }
    let bound = group.bound();
    cell.comparable &= !bound;
    // An absent figure measured nothing, the load generator included: no mark.
    if bound && metric.loadgen_sensitive && cell.value.is_some() {
        cell = cell.bound();
    }
    cell
}

/// Groups in row order: go, rust, zig, then other languages, then by server id.
pub(crate) fn by_language<'a, 'g>(
    groups: impl Iterator<Item = &'g Group<'a>>,
) -> impl Iterator<Item = &'g Group<'a>>
where
    'a: 'g,
{
    let mut groups: Vec<&Group> = groups.collect();
    groups.sort_by(|a, b| {
        let key = |g: &Group<'a>| {
            let r = g.first();
            (
                Language::rank(&r.server.language),
                r.server.id.clone(),
                r.server_label(),
            )
        };
        key(a).cmp(&key(b))
    });
    groups.into_iter()
}

/// A language's place in the order rows appear ([`Language`]'s; others after, by name).
pub(crate) fn language_rank(language: &str) -> (usize, String) {
    let (i, l) = Language::rank(language);
    (i, l.to_string())
}

/// The distinct languages, in [`Language`]'s order first, then by name.
pub(crate) fn ordered_languages<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut distinct: Vec<&str> = values.collect();
    distinct.sort_by_key(|value| Language::rank(value));
    distinct.dedup();
    distinct
}

/// A value's place in a known order; unknown values come after, alphabetically.
pub(crate) fn rank<'a>(value: &'a str, known: &[&str]) -> (usize, &'a str) {
    (
        known
            .iter()
            .position(|k| *k == value)
            .unwrap_or(known.len()),
        value,
    )
}

/// The distinct values, in their known order first.
pub(crate) fn ordered<'a>(values: impl Iterator<Item = &'a str>, known: &[&str]) -> Vec<&'a str> {
    let mut distinct: Vec<&str> = values.collect();
    distinct.sort_by_key(|value| rank(value, known));
    distinct.dedup();
    distinct
}

pub(crate) fn profile_title(profile: &str) -> String {
    match profile {
        "a" => "Profile A (frameworks)".into(),
        "b" => "Profile B (minimal / stdlib)".into(),
        "external" => "External servers (by URL)".into(),
        // servers/extra: its own group, never compared inside profile A's or B's tables.
        "extra" => "Extra (runtime servers, beside the profiles)".into(),
        other => format!("Profile {}", other.to_uppercase()),
    }
}

/// A profile's short name, as a column heading or a chart legend: `Profile A`, or `Extra` for
/// the servers beside the profiles (servers/extra).
pub(crate) fn profile_name(profile: &str) -> String {
    match profile {
        "extra" => "Extra".into(),
        other => format!("Profile {}", other.to_uppercase()),
    }
}

/// A row's name in a profile's tables: the language, with the variant and the load
/// parameters when the result has them (`Go@gomaxprocs-1 clients=100`).
pub(crate) fn language(result: &RunResult) -> String {
    let mut name = server_name(result);
    for (k, v) in wscbench_results::dimensions::params_text(&result.load_params) {
        name.push_str(&format!(" {k}={v}"));
    }
    name
}

/// A row's name without the load parameters: the language (an external server's name),
/// with the variant (`Go@gomaxprocs-1`).
pub(crate) fn server_name(result: &RunResult) -> String {
    // An external server has no language of record: its name (`external/NAME`) stands.
    let mut name = match &result.external_url {
        Some(_) => result
            .server
            .id
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string(),
        None => capitalized(&result.server.language),
    };
    if let Some(variant) = &result.variant {
        name.push_str(&format!("@{variant}"));
    }
    name
}

/// Where a server's rows go: profiles in order, then languages in order.
pub(crate) fn server_order(result: &RunResult) -> usize {
    let profile = rank(&result.server.profile, &PROFILES).0;
    let language = Language::rank(&result.server.language).0;
    profile * (Language::ALL.len() + 1) + language
}

/// A scenario's name in table titles and page headings (`Steady`, `Fan-out`).
pub(crate) fn scenario_title(scenario: Scenario) -> &'static str {
    match scenario {
        Scenario::Steady => "Steady",
        Scenario::Burst => "Burst",
        Scenario::Churn => "Churn",
        Scenario::Saturation => "Saturation",
        Scenario::Capacity => "Capacity",
        Scenario::IdleCapacity => "Idle capacity",
        Scenario::Fanout => "Fan-out",
        Scenario::SlowConsumers => "Slow consumers",
        Scenario::LoadCurve => "Load curve",
        Scenario::Population => "Population",
    }
}

/// A scenario's place in the order rows across scenarios appear: the enum's.
pub(crate) fn scenario_rank(scenario: Scenario) -> usize {
    Scenario::ALL
        .iter()
        .position(|s| *s == scenario)
        .unwrap_or(Scenario::ALL.len())
}

/// The word with its first letter in upper case (`go` → `Go`).
pub(crate) fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The latest result of each group of `scenario` that carries its figures (or the latest).
pub(crate) fn latest<'a>(
    groups: &[Group<'a>],
    scenario: Scenario,
    has: fn(&RunResult) -> bool,
) -> Vec<&'a RunResult> {
    groups
        .iter()
        .filter(|g| g.results[0].scenario == scenario)
        .filter_map(|g| {
            g.results
                .iter()
                .rev()
                .find(|r| has(r))
                .or(g.results.last())
                .copied()
        })
        .collect()
}
