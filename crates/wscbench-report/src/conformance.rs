//! The conformance table: one row per server and transport, one column per Autobahn
//! category (RFC 6455 section), each cell the category's worst verdict (strict, non-strict,
//! ignored, failed) with the cases behind it. Footnotes give the evidence of every case
//! that ignored a MUST or failed.

use wscbench_results::{CaseVerdict, Category, ServerConformance, Transport};

use crate::{Cell, Column, Row, Table};

/// The table of every server's conformance, in the order given; `None` without any.
pub fn conformance_table(servers: &[ServerConformance]) -> Option<Table> {
    if servers.is_empty() {
        return None;
    }
    let mut headings = vec![("server", false)];
    headings.extend(Category::ALL.iter().map(|c| (c.as_str(), false)));
    let mut footnotes = vec![
        "strict: the MUST and the close code RFC 6455 names; non-strict: failed without that \
         close frame or code; ignored: a MUST skipped, the connection stays usable; failed: \
         not delivered, not answered, or the server stopped answering"
            .to_string(),
    ];
    let rows = servers
        .iter()
        .map(|server| {
            let label = server_label(server);
            let mut cells = vec![Cell::label(label.clone())];
            for category in Category::ALL {
                cells.push(Cell::label(cell_text(server, category)));
            }
            footnotes.extend(
                server
                    .failing()
                    .filter(|c| c.verdict != CaseVerdict::NotRun)
                    .map(|c| format!("{label} {}: {} ({})", c.id, c.evidence, c.verdict.as_str())),
            );
            Row { cells }
        })
        .collect();
    Some(Table {
        title: "RFC 6455 conformance (Autobahn categories 1–7, through the chat protocol)".into(),
        columns: Column::unranked(&headings),
        rows,
        footnotes,
        scenario: None,
        axis: None,
    })
}

/// Appends to the note of every row of `summary` whose best is a server that ignored a
/// MUST of RFC 6455 over ws which categories it ignored: a figure won by skipping work the
/// others do is marked where it is read.
pub fn mark_ignoring(summary: &mut Table, servers: &[ServerConformance]) {
    let column = |name: &str| summary.columns.iter().position(|c| c.name == name);
    let (Some(best), Some(note)) = (column("Best"), column("Note")) else {
        return;
    };
    for row in &mut summary.rows {
        let winner = row.cells[best].text.clone();
        let ignoring = ignored_over_ws(servers, &winner);
        if ignoring.is_empty() {
            continue;
        }
        let cell = &mut row.cells[note];
        cell.text = format!(
            "{}; {winner} ignores a MUST of RFC 6455 ({}): see the conformance table",
            cell.text,
            ignoring.join(", ")
        );
    }
}

/// The categories in which `server` ignored a MUST of RFC 6455 over ws.
pub(crate) fn ignored_over_ws(servers: &[ServerConformance], server: &str) -> Vec<&'static str> {
    servers
        .iter()
        .filter(|s| s.transport.is_ws() && s.server == server)
        .flat_map(|s| s.ignored_categories())
        .map(|c| c.as_str())
        .collect()
}

/// A server's conformance in a few words, for a scorecard's cell: `strict`, or each verdict
/// below strict with the categories that have it (`non-strict: pings, close`).
pub(crate) fn in_brief(server: &ServerConformance) -> String {
    let mut by_verdict: Vec<(CaseVerdict, Vec<&str>)> = Vec::new();
    for category in Category::ALL {
        let Some((verdict, _)) = server.worst_in(category) else {
            continue;
        };
        if verdict == CaseVerdict::Strict {
            continue;
        }
        match by_verdict.iter_mut().find(|(v, _)| *v == verdict) {
            Some((_, categories)) => categories.push(category.as_str()),
            None => by_verdict.push((verdict, vec![category.as_str()])),
        }
    }
    if by_verdict.is_empty() {
        return CaseVerdict::Strict.as_str().to_string();
    }
    by_verdict
        .iter()
        .map(|(verdict, categories)| format!("{}: {}", verdict.as_str(), categories.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

fn server_label(server: &ServerConformance) -> String {
    match server.transport {
        Transport::Ws => server.server.clone(),
        t => format!("{} over {t}", server.server),
    }
}

/// `strict`, or the worst verdict with the cases that have it: `ignored: rsv2, rsv3`.
fn cell_text(server: &ServerConformance, category: Category) -> String {
    match server.worst_in(category) {
        None => "—".into(),
        Some((CaseVerdict::Strict, _)) => CaseVerdict::Strict.as_str().into(),
        Some((verdict, cases)) => {
            let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
            format!("{}: {}", verdict.as_str(), ids.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wscbench_results::CaseResult;
    use wscbench_results::conformance::CONFORMANCE_SCHEMA_VERSION;

    fn case(id: &str, category: Category, verdict: CaseVerdict) -> CaseResult {
        CaseResult {
            id: id.into(),
            category,
            rfc_section: "8.1".into(),
            rule: "r".into(),
            verdict,
            evidence: format!("{id} evidence"),
            duration_ms: 3,
        }
    }

    #[test]
    fn a_cell_shows_the_worst_verdict_and_the_cases_behind_it() {
        let go = ServerConformance {
            schema_version: CONFORMANCE_SCHEMA_VERSION,
            server: "profile-b/go".into(),
            transport: Transport::Wss,
            deflate_negotiated: false,
            cases: vec![
                case("utf8_a", Category::Utf8, CaseVerdict::Ignored),
                case("utf8_b", Category::Utf8, CaseVerdict::Strict),
                case("close_a", Category::Close, CaseVerdict::NonStrict),
                case("ping", Category::Pings, CaseVerdict::Strict),
            ],
        };
        let table = conformance_table(&[go]).unwrap();
        let row: Vec<&str> = table.rows[0]
            .cells
            .iter()
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(row[0], "profile-b/go over wss");
        assert_eq!(row[1], "—");
        assert_eq!(row[2], "strict");
        assert_eq!(row[6], "ignored: utf8_a");
        assert_eq!(row[7], "non-strict: close_a");
        assert_eq!(table.columns.len(), 8);
        assert!(
            table
                .footnotes
                .iter()
                .any(|f| f.contains("utf8_a evidence")),
            "{:?}",
            table.footnotes
        );
        assert!(
            !table
                .footnotes
                .iter()
                .any(|f| f.contains("close_a evidence"))
        );
        assert!(conformance_table(&[]).is_none());
    }
}
