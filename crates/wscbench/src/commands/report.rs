//! `wscbench report`: the comparison tables (or one metric's history) from stored results alone.

use std::path::{Path, PathBuf};

use clap::Args;
use wscbench_report::{
    Choice, Report, Width, history::history, html, load_every_run, load_results, select,
};

use crate::args::parse_format;
use crate::errors::{Doing, ExpectedError, UsageError};
use crate::exit::ExitCode;

/// `wscbench report`'s command line.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results directory, or one run's directory inside it
    #[arg(default_value = "results", value_name = "DIR")]
    pub dir: PathBuf,
    /// Only this run's results [default: the latest run of each point, in the mode and conditions of the most recent run]
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// Only results of this mode: smoke, quick, seed or soak
    #[arg(long, value_name = "MODE")]
    pub mode: Option<wscbench_results::Mode>,
    /// terminal, markdown (best value of each column in bold), json, or html (one
    /// self-contained page with charts, written to --output, report.html by default)
    #[arg(long, default_value = "terminal", value_parser = parse_report_format)]
    pub format: ReportFormat,
    /// Print every column of the terminal tables and the Summary table, however wide [default: headline columns and the scorecards, 120 wide]
    #[arg(long)]
    pub wide: bool,
    /// Write the report to this file instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// One metric of one server × scenario across every stored run, in date order
    #[arg(long, requires_all = ["server", "scenario"])]
    pub history: bool,
    /// The server of --history, e.g. profile-b/go
    #[arg(long, value_name = "ID", requires = "history")]
    pub server: Option<String>,
    /// The scenario of --history
    #[arg(long, value_name = "SCENARIO", requires = "history")]
    pub scenario: Option<wscbench_results::Scenario>,
    /// The metric of --history [default: the scenario's throughput, or connections for churn]
    #[arg(long, value_name = "NAME", requires = "history", value_parser = parse_metric)]
    pub metric: Option<&'static wscbench_report::Metric>,
}

/// What `report` writes: one of the text formats, or the HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Terminal, Markdown or JSON text.
    Text(wscbench_report::Format),
    /// The self-contained HTML page (`wscbench_report::html`).
    Html,
}

fn parse_metric(s: &str) -> Result<&'static wscbench_report::Metric, String> {
    wscbench_report::metrics::find(s).ok_or_else(|| {
        format!(
            "unknown metric {s:?}; the metrics are {}",
            wscbench_report::metrics::keys()
        )
    })
}

fn parse_report_format(s: &str) -> Result<ReportFormat, String> {
    if s.eq_ignore_ascii_case("html") {
        return Ok(ReportFormat::Html);
    }
    parse_format(s)
        .map(ReportFormat::Text)
        .map_err(|e| format!("{e}, html"))
}

/// A relative directory that does not exist here is looked up under the project root.
pub fn resolve(root: &Path, dir: &Path) -> PathBuf {
    if dir.is_relative() && !dir.exists() {
        root.join(dir)
    } else {
        dir.to_path_buf()
    }
}

pub fn run(root: &Path, args: ReportArgs) -> Result<ExitCode, ExpectedError> {
    let dir = resolve(root, &args.dir);
    let loaded = if args.history {
        load_every_run(&dir)
    } else {
        load_results(&dir, args.run.as_deref())
    }
    .doing(|| format!("reading results from {}", dir.display()))?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    eprintln!("{}", loaded.summary_line());
    let mut shown = loaded.results.clone();
    let report = if args.history {
        let (Some(server), Some(scenario)) = (args.server.as_deref(), args.scenario) else {
            return Err(UsageError::new("--history needs --server and --scenario").into());
        };
        let report = history(&loaded.results, server, scenario, args.metric);
        if report.is_empty() {
            return Err(ExpectedError::Failed {
                message: format!(
                    "no ok results of {server} under {scenario} in {}",
                    dir.display()
                ),
            });
        }
        report
    } else {
        let selection = select(
            &loaded.results,
            &Choice {
                mode: args.mode,
                run: args.run.clone(),
            },
        );
        let runs: std::collections::BTreeSet<&str> = selection
            .results
            .iter()
            .map(|r| r.run_id.as_str())
            .collect();
        let records = wscbench_report::records(&dir, &runs.into_iter().collect::<Vec<_>>());
        for warning in &records.warnings {
            eprintln!("warning: {warning}");
        }
        let mut report = Report::from_selected_with(&selection.results, &records);
        report.notes.extend(selection.left_out);
        shown = selection.results;
        report
    };
    let (text, output) = match args.format {
        ReportFormat::Text(format) => {
            let width = if args.wide { Width::Wide } else { Width::Fit };
            (format.render_at(&report, width), args.output)
        }
        ReportFormat::Html => {
            let context = html::PageContext::for_results(&dir, &shown);
            let page = html::render_page(&shown, &report, &context);
            // A page is not for a terminal: it always goes to a file.
            (
                page,
                Some(args.output.unwrap_or_else(|| "report.html".into())),
            )
        }
    };
    match output {
        Some(path) => {
            std::fs::write(&path, text).doing(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::Ok)
}
