//! `wscbench report`: the comparison tables (or one metric's history) from stored results alone.

use std::path::{Path, PathBuf};

use wscbench_report::{
    Choice, Report, Width, history::history, html, load_every_run, load_results, select,
};

use crate::cli::{ReportArgs, ReportFormat};
use crate::errors::{Doing, ExpectedError, UsageError};
use crate::exit::ExitCode;

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
        let not_offered =
            wscbench_report::load::not_offered(&dir, &runs.into_iter().collect::<Vec<_>>());
        let mut report = Report::from_selected_offering(&selection.results, &not_offered);
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
