//! The scorecards: the answer on one screen. One per profile, one row per decision of the
//! summary (whatever dimensions it has), one column per server, each cell the server's
//! figure with its 95 % interval, or its bound, `k6` or `failed`; the best of a decided row
//! marked `★ best`, the servers within noise of each other `= tie`. Under each, one sentence
//! per row, hyperfine's way: what the best did and by how much, or why nothing was decided.
//! Built from [`Decision`]s alone, so it can hold no figure the summary did not decide on.

use wscbench_results::{Language, ServerConformance};

use crate::conformance::{ignored_over_ws, in_brief};
use crate::decision::{Decision, FAILED_CELL, Figure, LOADGEN_CELL, Verdict, comparative};
use crate::rows::{PROFILES, ordered, profile_title};
use crate::table::{ABSENT, Cell, Column, Row, Scorecard, Table};

/// Marks the best of a decided row, in text (never by colour alone).
pub(crate) const BEST_MARK: &str = "★ best";
/// Marks the servers of a row within noise of each other.
pub(crate) const TIE_MARK: &str = "= tie";

/// The row of RFC 6455 conformance, when the run recorded it.
const CONFORMANCE_ROW: &str = "RFC 6455 conformance (Autobahn 1–7)";

/// One scorecard per profile that has a decision, in profile order.
pub(crate) fn scorecards(
    decisions: &[Decision],
    conformance: &[ServerConformance],
) -> Vec<Scorecard> {
    let profiles = ordered(decisions.iter().map(|d| d.profile.as_str()), &PROFILES);
    profiles
        .into_iter()
        .map(|profile| {
            let rows: Vec<&Decision> = decisions.iter().filter(|d| d.profile == profile).collect();
            scorecard(profile, &rows, conformance)
        })
        .collect()
}

fn scorecard(
    profile: &str,
    decisions: &[&Decision],
    conformance: &[ServerConformance],
) -> Scorecard {
    let mut servers: Vec<&str> = Vec::new();
    for (server, _) in decisions.iter().flat_map(|d| &d.figures) {
        if !servers.contains(&server.as_str()) {
            servers.push(server);
        }
    }
    servers.sort_by_key(|s| Language::rank(s.rsplit('/').next().unwrap_or(s)));
    let mut columns = vec![Column {
        name: "Dimension".into(),
        better: None,
        numeric: false,
        detail: false,
    }];
    columns.extend(servers.iter().map(|s| Column {
        name: s.to_string(),
        better: None,
        numeric: true,
        detail: false,
    }));
    let mut rows: Vec<Row> = decisions.iter().map(|d| row(d, &servers)).collect();
    let ws: Vec<&ServerConformance> = conformance
        .iter()
        .filter(|c| c.transport.is_ws() && servers.contains(&c.server.as_str()))
        .collect();
    if !ws.is_empty() {
        let mut cells = vec![Cell::label(CONFORMANCE_ROW)];
        cells.extend(servers.iter().map(|s| {
            ws.iter()
                .find(|c| c.server == *s)
                .map_or_else(Cell::absent, |c| Cell::label(in_brief(c)))
        }));
        rows.push(Row { cells });
    }
    let sentences = decisions.iter().map(|d| sentence(d, conformance)).collect();
    let footnotes = legend(&rows);
    Scorecard {
        profile: profile.to_string(),
        table: Table {
            title: format!("Scorecard — {}", profile_title(profile)),
            columns,
            rows,
            footnotes,
            scenario: None,
            axis: None,
        },
        sentences,
    }
}

/// One decision as a row: each server's figure, the best and the tied marked.
fn row(decision: &Decision, servers: &[&str]) -> Row {
    let mut cells = vec![Cell::label(&decision.name)];
    for server in servers {
        let Some((_, figure)) = decision.figures.iter().find(|(s, _)| s == server) else {
            cells.push(Cell::absent());
            continue;
        };
        let text = figure.text(decision.metric);
        let mut cell = match figure {
            Figure::Measured(s) => Cell {
                text: text.clone(),
                comparable: false,
                ..Cell::summary(s, decision.metric.format)
            },
            Figure::LoadGenerator => Cell {
                loadgen_bound: true,
                ..Cell::label(text)
            },
            _ => Cell::label(text),
        };
        match &decision.verdict {
            Verdict::Best { server: best, .. } if best == server => {
                cell.best = true;
                cell.text = format!("{} {BEST_MARK}", cell.text);
            }
            Verdict::Tie { servers, .. } if servers.iter().any(|s| s == server) => {
                cell.tied = true;
                cell.text = format!("{} {TIE_MARK}", cell.text);
            }
            _ => {}
        }
        cells.push(cell);
    }
    Row { cells }
}

/// What the marks and words of the cells mean: only those the scorecard uses.
fn legend(rows: &[Row]) -> Vec<String> {
    let texts: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.cells.iter().skip(1))
        .map(|c| c.text.as_str())
        .collect();
    let uses = |word: &str| texts.iter().any(|t| t.contains(word));
    let mut legend = vec![
        "Each figure over the rounds free of the load generator: mean ± the half-width of its 95 % interval. The Summary table gives each row's margin and reasons.".to_string(),
    ];
    for (word, meaning) in [
        (
            BEST_MARK,
            "its 95 % interval clears every other server's (or it carried a higher step)",
        ),
        (
            TIE_MARK,
            "within noise of the best (the 95 % intervals overlap, or the figures are equal): none is named best",
        ),
        (
            "≥ ",
            "a bound: the curve's top step, or the last step before k6 became the limit",
        ),
        ("< ", "a bound: not even the curve's first step was carried"),
        (
            LOADGEN_CELL,
            "the load generator was the limit in every round: the figure measures k6 (its value at k6's limit is in the Summary)",
        ),
        (FAILED_CELL, "no round ended ok"),
        (ABSENT, "not measured"),
    ] {
        let present = if word == LOADGEN_CELL || word == FAILED_CELL || word == ABSENT {
            texts.contains(&word)
        } else {
            uses(word)
        };
        if present {
            legend.push(format!("{}: {meaning}.", word.trim()));
        }
    }
    legend
}

/// The row's sentence: what the best did and by how much, or why nothing was decided.
fn sentence(decision: &Decision, conformance: &[ServerConformance]) -> String {
    let figure = |server: &str| {
        decision
            .figures
            .iter()
            .find(|(s, _)| s == server)
            .map(|(_, f)| f.text(decision.metric))
            .unwrap_or_else(|| ABSENT.to_string())
    };
    let name = &decision.name;
    match &decision.verdict {
        Verdict::Best {
            server,
            runner_up,
            factor,
        } => {
            let said = match &decision.wording {
                Some(w) => format!("{server} {} {} {}", w.verb, figure(server), w.after),
                None => format!("{server}: {name} {}", figure(server)),
            };
            let bound = |s: &str| {
                decision
                    .figures
                    .iter()
                    .any(|(x, f)| x == s && matches!(f, Figure::AtLeast(_) | Figure::Below(_)))
            };
            // A factor over a bound is a bound too: at least, where the best's figure is one;
            // none at all where the runner-up's is.
            let factor = if bound(runner_up) { &None } else { factor };
            let at_least = if bound(server) { "at least " } else { "" };
            let margin = match factor {
                Some((f, Some(spread))) => format!(
                    "{f:.2} ± {spread:.2}× {} than",
                    comparative(decision.metric.better)
                ),
                Some((f, None)) => format!("{f:.2}× {} than", comparative(decision.metric.better)),
                None => "ahead of".to_string(),
            };
            let mut text = format!(
                "{said}, {at_least}{margin} {runner_up} ({})",
                figure(runner_up)
            );
            if let Some(beside) = &decision.beside {
                let of = |s: &str| beside.figures.iter().find(|(x, _)| x == s).map(|(_, t)| t);
                if let (Some(a), Some(b)) = (of(server), of(runner_up)) {
                    text.push_str(&format!(", at {} {a} against {b}", beside.what));
                }
            }
            let ignoring = ignored_over_ws(conformance, server);
            if !ignoring.is_empty() {
                text.push_str(&format!(
                    " ({server} ignores a MUST of RFC 6455: {}; see the conformance table)",
                    ignoring.join(", ")
                ));
            }
            text.push('.');
            text
        }
        Verdict::Tie { servers, why } => {
            format!("{name}: no best; {} tie ({why}).", and_list(servers))
        }
        Verdict::Undecided => format!(
            "{name}: no best; one round each, so no interval to decide by (run --runs 3 or more)."
        ),
        Verdict::LoadGenerator => {
            let free: Vec<String> = decision
                .figures
                .iter()
                .filter(|(_, f)| matches!(f, Figure::Measured(_) | Figure::AtLeast(_)))
                .map(|(s, _)| s.clone())
                .collect();
            let rest = match free.as_slice() {
                [] => {
                    "k6 was the limit of every server, so the figures measure k6, not the servers"
                        .to_string()
                }
                [one] => format!(
                    "k6 was the limit of the others, so {one}, the only one free of it, ranks against nobody"
                ),
                many => format!(
                    "k6 was the limit in some rounds; {} have too few rounds free of it to rank",
                    and_list(many)
                ),
            };
            format!("{name}: no best; {rest}.")
        }
        Verdict::Alone => {
            let only = decision
                .figures
                .iter()
                .find(|(_, f)| f.measured().is_some())
                .map_or("one server", |(s, _)| s.as_str());
            format!("{name}: only {only} was measured ({}).", figure(only))
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::with_interval;
    use crate::stats::Summary;

    #[test]
    fn a_figure_prints_its_unit_once_beside_its_interval() {
        let s = Summary::of(&[8.0, 9.0, 8.8]).unwrap();
        assert_eq!(with_interval(&s, crate::units::cpu_ms), "8.60 ± 1.31 ms");
        let one = Summary::of(&[200_000.0]).unwrap();
        assert_eq!(with_interval(&one, crate::units::rate), "200,000");
    }

    #[test]
    fn lists_are_joined_with_commas_and_a_last_and() {
        let list = |v: &[&str]| and_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(list(&["a"]), "a");
        assert_eq!(list(&["a", "b"]), "a and b");
        assert_eq!(list(&["a", "b", "c"]), "a, b and c");
    }
}
