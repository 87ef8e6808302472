//! The self-contained HTML report: one file that leads with the answer (the scorecards and
//! their sentences, then the headline charts), then the run's conditions, a short guide, the
//! [`Report`]'s tables and one section per scenario with its charts (inline SVG drawn by
//! plotters) above its exact tables. No script, font, image or style is fetched: the page
//! opens from disk, and prints.
//!
//! The tables are rendered generically, whatever columns and footnotes they have; this
//! module decides only where each one goes on the page.

mod charts;
mod figures;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use wscbench_results::{RUN_MANIFEST_FILE, RunManifest, RunResult, Scenario};

use crate::rows::scenario_title;
use crate::table::{Axis, Knob, Report, Scorecard, Table};
use figures::Figure;

/// The page's stylesheet, screen and print.
const STYLE: &str = include_str!("style.css");

/// What the page says about where its results come from, beyond the results themselves.
#[derive(Debug, Clone, Default)]
pub struct PageContext {
    /// The command line that produced the results, when known.
    pub command: Option<String>,
    /// The run's manifest, when the page shows one run.
    pub manifest: Option<RunManifest>,
}

impl PageContext {
    /// The context of results read from `dir` (a results directory or one run's): the run's
    /// `run.json` when every result comes from one run and its manifest can be read.
    pub fn for_results(dir: &Path, results: &[RunResult]) -> PageContext {
        let runs: BTreeSet<&str> = results.iter().map(|r| r.run_id.as_str()).collect();
        let manifest = match runs.into_iter().collect::<Vec<_>>()[..] {
            [run] => [
                dir.join(RUN_MANIFEST_FILE),
                dir.join(run).join(RUN_MANIFEST_FILE),
            ]
            .iter()
            .filter_map(|path| std::fs::read_to_string(path).ok())
            .filter_map(|text| RunManifest::from_json(&text).ok())
            .find(|manifest| manifest.run_id == run),
            _ => None,
        };
        PageContext {
            command: manifest.as_ref().map(|m| m.command.clone()),
            manifest,
        }
    }
}

/// The whole page for `results`, with `report` (built from the same results) for its
/// tables.
pub fn render_page(results: &[RunResult], report: &Report, context: &PageContext) -> String {
    let runs: BTreeSet<&str> = results.iter().map(|r| r.run_id.as_str()).collect();
    let runs: Vec<&str> = runs.into_iter().collect();
    let title = match runs[..] {
        [] => "wscbench report".to_string(),
        [run] => format!("wscbench report — run {run}"),
        _ => format!(
            "wscbench report — runs {} to {}",
            runs[0],
            runs[runs.len() - 1]
        ),
    };
    let scenarios: Vec<Scenario> = Scenario::ALL
        .iter()
        .copied()
        .filter(|s| results.iter().any(|r| r.scenario == *s))
        .collect();
    let mut placed = place_tables(report);
    // A table named for a scenario with no section of its own (the capacity table of a run
    // with only idle-capacity results) goes with the tables across scenarios.
    let (shown, orphaned): (Vec<_>, Vec<_>) = placed
        .by_scenario
        .into_iter()
        .partition(|(s, _)| scenarios.contains(s));
    placed.by_scenario = shown;
    placed.rest.extend(orphaned.into_iter().map(|(_, t)| t));

    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <header><h1>{}</h1></header>\n",
        escape(&title),
        escape(&title)
    );
    // The answer first: the scorecards, then the charts that show it.
    page.push_str(&answer(&report.scorecards));
    let headline = figures::headline_figures(results);
    page.push_str(&headline_charts(&headline));
    page.push_str(&conditions(results, context));
    page.push_str(&HOW_TO_READ.replace("{BOUND}", charts::BOUND_MARK));
    if !scenarios.is_empty() {
        page.push_str("<nav><strong>Scenarios:</strong>");
        for scenario in &scenarios {
            let _ = write!(
                page,
                " <a href=\"#scenario-{}\">{}</a>",
                scenario.as_str(),
                scenario_title(*scenario)
            );
        }
        page.push_str("</nav>\n");
    }
    if !placed.top.is_empty() {
        page.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
        placed.top.iter().for_each(|t| page.push_str(&table(t)));
        page.push_str("</section>\n");
    }
    for scenario in &scenarios {
        let tables: Vec<&Table> = placed
            .by_scenario
            .iter()
            .filter(|(s, _)| s == scenario)
            .map(|(_, t)| *t)
            .collect();
        let lead = headline.iter().any(|h| h.scenario == *scenario);
        page.push_str(&scenario_section(results, *scenario, &tables, lead));
    }
    if !placed.rest.is_empty() {
        page.push_str("<section id=\"other-tables\">\n<h2>Across scenarios</h2>\n");
        placed.rest.iter().for_each(|t| page.push_str(&table(t)));
        page.push_str("</section>\n");
    }
    if results.is_empty() {
        page.push_str("<p class=\"note\">No results to show.</p>\n");
    }
    let _ = write!(
        page,
        "<footer>Made by wscbench {} from {} result file{}.</footer>\n</main>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        results.len(),
        if results.len() == 1 { "" } else { "s" }
    );
    page
}

/// The scorecards, each with its sentences and key: the page's first tables.
fn answer(scorecards: &[Scorecard]) -> String {
    if scorecards.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"answer\">\n<h2>The answer</h2>\n<p class=\"key\">One scorecard per \
         profile: each server's figure per headline dimension with its 95&nbsp;% interval; \
         <span class=\"best\">★ best</span> where the intervals separate, \
         <span class=\"tie\">= tie</span> where they do not. Each decision's margin and \
         reasons are in the Summary below.</p>\n",
    );
    for scorecard in scorecards {
        let table_html = table(&Table {
            footnotes: Vec::new(),
            ..scorecard.table.clone()
        });
        // The sentences belong to the table: inside its box, before its key.
        let (head, tail) = table_html.split_at(table_html.rfind("</div>").unwrap_or(0));
        let _ = write!(
            out,
            "<div class=\"scorecard\" data-profile=\"{}\">\n{head}",
            escape(&scorecard.profile)
        );
        out.push_str("<ul class=\"sentences\">\n");
        for sentence in &scorecard.sentences {
            let _ = writeln!(out, "<li>{}</li>", escape(sentence));
        }
        out.push_str("</ul>\n<ul class=\"footnotes\">\n");
        for note in &scorecard.table.footnotes {
            let _ = writeln!(out, "<li>{}</li>", escape(note));
        }
        let _ = write!(out, "</ul>\n{tail}</div>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The charts that show the answer, right under the scorecards (see
/// [`figures::headline_figures`] for which they are).
fn headline_charts(headline: &[figures::Headline]) -> String {
    if headline.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"headline-charts\">\n<h2>Headline charts</h2>\n<div class=\"charts\">\n",
    );
    for chart in headline {
        out.push_str(&figure_html(&chart.figure, "wide"));
    }
    out.push_str("</div>\n</section>\n");
    out
}

const HOW_TO_READ: &str = "<section id=\"how-to-read\">\n<h2>How to read this</h2>\n<ul>\n\
<li>Each scenario has its own section: charts first, then the exact tables they are drawn from.</li>\n\
<li>Bars are grouped by profile (A: frameworks, B: minimal / stdlib) and coloured by language. \
A whisker is the 95&nbsp;% confidence interval of the mean when a point was repeated.</li>\n\
<li>A pale, outlined bar marked <span class=\"bound\">{BOUND}</span> measures the load generator (k6), \
not the server: k6 ran out of room before the server did. Such figures do not compete for best; \
the reasons are listed under each scenario's charts and in the tables' footnotes.</li>\n\
<li>The per-second charts of a scenario share their axes, so their heights compare across servers. \
On a machine where k6 and the server share the cores, a k6 CPU line near the top means k6 was the limit.</li>\n\
<li>In the tables, the best comparable value of a column is in bold.</li>\n\
</ul>\n</section>\n";

/// The conditions the results were measured under: one value when every result agrees,
/// each distinct value otherwise.
fn conditions(results: &[RunResult], context: &PageContext) -> String {
    fn distinct<T: ToString>(results: &[RunResult], f: impl Fn(&RunResult) -> T) -> String {
        let mut values: Vec<String> = Vec::new();
        for value in results.iter().map(|r| f(r).to_string()) {
            if !values.contains(&value) {
                values.push(value);
            }
        }
        if values.is_empty() {
            "—".into()
        } else {
            values.join("; ")
        }
    }
    let mut rows: Vec<(&str, String)> = vec![
        (
            "Machine",
            distinct(results, |r| {
                format!(
                    "{} cores, kernel {}",
                    r.conditions.machine_cores, r.conditions.kernel
                )
            }),
        ),
        (
            "Server limits",
            distinct(results, |r| {
                let mut text = format!(
                    "--cpus {} --memory {}",
                    r.conditions.server_cpus,
                    crate::units::size(r.conditions.server_memory_bytes)
                );
                match (&r.conditions.cpuset_server, &r.conditions.cpuset_loadgen) {
                    (None, None) => text.push_str(", no pinning"),
                    (server, loadgen) => text.push_str(&format!(
                        ", server on cores {}, k6 on cores {}",
                        server.as_deref().unwrap_or("any"),
                        loadgen.as_deref().unwrap_or("any")
                    )),
                }
                text
            }),
        ),
        (
            "Docker",
            distinct(results, |r| {
                format!(
                    "engine {} (API {})",
                    r.conditions.docker_version, r.conditions.docker_api_version
                )
            }),
        ),
        ("k6", distinct(results, |r| r.conditions.k6_version.clone())),
        ("Load path", distinct(results, |r| r.load_path)),
        ("Mode", distinct(results, |r| r.mode)),
    ];
    if let Some(command) = context
        .command
        .as_ref()
        .or(context.manifest.as_ref().map(|m| &m.command))
    {
        rows.push(("Command", command.clone()));
    }
    let starts: BTreeSet<&str> = results.iter().map(|r| r.started_at.as_str()).collect();
    if let (Some(first), Some(last)) = (starts.first(), starts.last()) {
        let date = if first == last {
            first.to_string()
        } else {
            format!("{first} to {last}")
        };
        rows.push(("Date (UTC)", date));
    }
    if let Some(manifest) = &context.manifest {
        let mut status = format!("{:?}", manifest.status).to_lowercase();
        if let Some(detail) = &manifest.status_detail {
            status.push_str(&format!(" ({detail})"));
        }
        rows.push(("Run", format!("{} — {status}", manifest.run_id)));
    }
    let mut out = String::from("<section id=\"conditions\">\n<h2>Conditions</h2>\n<dl>\n");
    for (name, value) in rows {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(name), escape(&value));
    }
    out.push_str("</dl>\n</section>\n");
    out
}

/// One scenario: its bar charts, their load-generator reasons, the latency percentiles,
/// the per-second figures, then its tables. Its own charts stay at the top of the page when
/// they `lead` it (the headline charts); a link says so.
fn scenario_section(
    results: &[RunResult],
    scenario: Scenario,
    tables: &[&Table],
    lead: bool,
) -> String {
    let points = figures::points_of(results, scenario);
    let title = scenario_title(scenario);
    let mut out = format!(
        "<section class=\"scenario\" id=\"scenario-{}\">\n<h2>{title}</h2>\n<p>{}</p>\n",
        scenario.as_str(),
        scenario_summary(scenario)
    );
    if points.is_empty() {
        out.push_str(
            "<p class=\"note\">No run of this scenario ended ok, so there is nothing to chart; \
             the tables below say how each ended.</p>\n",
        );
    } else {
        out.push_str("<div class=\"legend\">");
        let mut keyed: Vec<String> = Vec::new();
        for (index, point) in points.iter().enumerate() {
            let label = point.label();
            if keyed.contains(&label) {
                continue;
            }
            let _ = write!(
                out,
                "<span><i style=\"background:{}\"></i>{}</span>",
                charts::css(point.color(index)),
                escape(&label)
            );
            keyed.push(label);
        }
        out.push_str("</div>\n<div class=\"charts bars\">\n");
        for figure in figures::bar_figures(&points) {
            out.push_str(&figure_html(&figure, "bars"));
        }
        out.push_str("</div>\n");
        out.push_str(&bound_reasons(&points));
        out.push_str("<h3>Latency percentiles</h3>\n<div class=\"charts\">\n");
        let latency_title = format!("{title}: chat latency by percentile");
        out.push_str(&figure_html(
            &figures::latency_figure(&points, &latency_title),
            "latency",
        ));
        out.push_str(
            "</div>\n<h3>Per second</h3>\n<p class=\"key\">Each server's run, second by second: \
             server CPU (its colour) and k6 CPU (thin grey) in % of one core, server memory, and \
             the deliveries the server wrote each second. Every figure has the same axes.</p>\n\
             <div class=\"charts series\">\n",
        );
        for (_, figure) in figures::series_figures(&points) {
            out.push_str(&figure_html(&figure, "series"));
        }
        out.push_str("</div>\n");
        let own = figures::scenario_figures(&points, scenario);
        if lead {
            let _ = writeln!(
                out,
                "<h3>{title}</h3>\n<p class=\"key\">This scenario's own charts lead the page: \
                 <a href=\"#headline-charts\">headline charts</a>.</p>"
            );
        } else if !own.is_empty() {
            let _ = write!(out, "<h3>{title}</h3>\n<div class=\"charts\">\n");
            for figure in &own {
                out.push_str(&figure_html(figure, "wide"));
            }
            out.push_str("</div>\n");
        }
    }
    let knobs: Vec<(&Table, &Axis)> = tables
        .iter()
        .filter_map(|t| t.axis.as_ref().map(|axis| (*t, axis)))
        .collect();
    let mut knob_names: Vec<Knob> = knobs.iter().map(|(_, a)| a.knob).collect();
    knob_names.dedup();
    for knob in knob_names {
        let name = knob.to_string();
        let _ = write!(
            out,
            "<h3>Across {}</h3>\n<p class=\"key\">One line per server through each value of \
             {}; every other dimension of its points is equal. The exact values are in the \
             tables below.</p>\n<div class=\"charts knobs\">\n",
            escape(&name),
            escape(&name)
        );
        for (table, axis) in knobs.iter().filter(|(_, a)| a.knob == knob) {
            out.push_str(&figure_html(&figures::knob_figure(table, axis), "knob"));
        }
        out.push_str("</div>\n");
    }
    if !tables.is_empty() {
        out.push_str("<h3>Tables</h3>\n");
        tables.iter().for_each(|t| out.push_str(&table(t)));
    }
    out.push_str("</section>\n");
    out
}

/// Why a scenario's marked figures measure the load generator, one line per kind of reason;
/// empty when none does.
fn bound_reasons(points: &[figures::Point]) -> String {
    let reasons = figures::reasons_by_kind(points);
    if reasons.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<div class=\"reasons\"><p><span class=\"bound\">{}</span> Load-generator bound: \
         the marked figures measure k6, not the server. Why:</p>\n<ul>\n",
        charts::BOUND_MARK
    );
    for (kind, labels) in reasons {
        let _ = writeln!(
            out,
            "<li><strong>{}</strong>: {}</li>",
            escape(kind),
            escape(&labels.join(", "))
        );
    }
    out.push_str("</ul></div>\n");
    out
}

fn figure_html(figure: &Figure, kind: &str) -> String {
    match figure {
        // Bar and latency charts carry their title inside; a caption would repeat it.
        Figure::Chart { svg, caption } if kind == "series" => format!(
            "<figure class=\"chart\" data-chart=\"{kind}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
            inline_svg(svg),
            escape(caption)
        ),
        Figure::Chart { svg, caption } => format!(
            "<figure class=\"chart {kind}\" data-chart=\"{kind}\" aria-label=\"{}\">\n{}\n</figure>\n",
            escape(caption),
            inline_svg(svg)
        ),
        Figure::Note(note) => format!(
            "<p class=\"note\" data-chart=\"{kind}\">{}</p>\n",
            escape(note)
        ),
    }
}

/// The namespace plotters writes on its root element: an identifier, never fetched, and
/// not needed inline in HTML, where the parser puts `<svg>` in that namespace itself.
pub const SVG_XMLNS: &str = " xmlns=\"http://www.w3.org/2000/svg\"";

/// The chart as inline SVG: without the namespace attribute (so the page names no URL at
/// all) and scaling to the width it is given.
fn inline_svg(svg: &str) -> String {
    svg.replacen(SVG_XMLNS, " role=\"img\"", 1)
}

/// Where each of the report's tables goes: a table of one scenario goes to that scenario's
/// section; the others stay in the report's order, before the first scenario table (the
/// summary) or after it.
struct Placed<'a> {
    top: Vec<&'a Table>,
    by_scenario: Vec<(Scenario, &'a Table)>,
    rest: Vec<&'a Table>,
}

fn place_tables(report: &Report) -> Placed<'_> {
    let mut placed = Placed {
        top: Vec::new(),
        by_scenario: Vec::new(),
        rest: Vec::new(),
    };
    for table in &report.tables {
        match table.scenario {
            Some(scenario) => placed.by_scenario.push((scenario, table)),
            None if placed.by_scenario.is_empty() => placed.top.push(table),
            None => placed.rest.push(table),
        }
    }
    placed
}

/// Text cells longer than this may wrap (class `wrap`), so that the widest scenario table fits
/// a 1280-px window; shorter ones, such as a server id that would break at its hyphen, do not.
const WRAP_AFTER_CHARS: usize = 24;

/// One table of the report, as it is: title, columns, cells (best in bold), footnotes.
fn table(table: &Table) -> String {
    let mut out = String::from("<div class=\"table\">\n<table>\n");
    let _ = writeln!(out, "<caption>{}</caption>", escape(&table.title));
    out.push_str("<thead><tr>");
    for column in &table.columns {
        let class = if column.numeric { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(&column.name));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for (index, cell) in row.cells.iter().enumerate() {
            let mut classes = Vec::new();
            let numeric = table.columns.get(index).is_some_and(|c| c.numeric);
            if numeric {
                classes.push("num");
            } else if cell.text.chars().count() > WRAP_AFTER_CHARS {
                classes.push("wrap");
            }
            if cell.loadgen_bound {
                classes.push("bound");
            }
            // Colour for the eye; the text says the same (a mark, or bold) for every reader.
            if cell.best {
                classes.push("best");
            }
            if cell.tied {
                classes.push("tie");
            }
            let class = if classes.is_empty() {
                String::new()
            } else {
                format!(" class=\"{}\"", classes.join(" "))
            };
            let text = escape(&cell.text);
            if cell.best {
                let _ = write!(out, "<td{class}><strong>{text}</strong></td>");
            } else {
                let _ = write!(out, "<td{class}>{text}</td>");
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    if !table.footnotes.is_empty() {
        out.push_str("<ul class=\"footnotes\">\n");
        for note in &table.footnotes {
            let _ = writeln!(out, "<li>{}</li>", escape(note));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</div>\n");
    out
}

/// What a scenario asks of a server, in a sentence (scenarios/*.js say it at length).
fn scenario_summary(scenario: Scenario) -> &'static str {
    match scenario {
        Scenario::Steady => {
            "Constant clients chatting at a steady rate: the load every server should hold."
        }
        Scenario::Burst => "A join storm: many clients arrive within seconds, chat once and leave.",
        Scenario::Churn => {
            "Clients join, chat once and leave every few seconds, for a minute: connection set-up and tear-down."
        }
        Scenario::Saturation => "More clients and more chats, step by step, until something gives.",
        Scenario::Capacity => {
            "Steps of clients chatting at a room's pace, until latency p95 passes the target: the most clients held at it."
        }
        Scenario::IdleCapacity => {
            "Steps of joined clients that never chat, until memory nears the limit or connects fail: clients held, bytes each."
        }
        Scenario::Fanout => {
            "Clients in rooms of one size, the same deliveries asked for every size: what a room's size costs."
        }
        Scenario::SlowConsumers => {
            "A share of one room stops reading, then reads again: the healthy clients' latency, the recovery, the memory per slow client."
        }
        Scenario::Population => {
            "Users in rooms of 50 that ping every 25 s, chat once a minute and churn 1 % a minute, brought up in three levels: what a connected user costs in memory (the slope across the levels, user space and kernel apart) and CPU."
        }
        Scenario::LoadCurve => {
            "One room offered a fixed, open-loop rate of deliveries, step by step: what a delivery costs and how late it arrives, up to where the server stops carrying it."
        }
    }
}

/// Text as HTML: the five characters that could end an element or an attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_elements_and_attributes() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
