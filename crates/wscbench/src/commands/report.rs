//! `wscbench report`: the comparison tables (or one metric's history) from stored results alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use wscbench_report::{Choice, Report, history::history, load_every_run, load_results, select};

use crate::cli::ReportArgs;

/// A relative directory that does not exist here is looked up under the project root.
pub fn resolve(root: &Path, dir: &Path) -> PathBuf {
    if dir.is_relative() && !dir.exists() {
        root.join(dir)
    } else {
        dir.to_path_buf()
    }
}

pub fn run(root: &Path, args: ReportArgs) -> Result<i32> {
    let dir = resolve(root, &args.dir);
    let loaded = if args.history {
        load_every_run(&dir)
    } else {
        load_results(&dir, args.run.as_deref())
    }
    .with_context(|| format!("reading results from {}", dir.display()))?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    eprintln!("{}", loaded.summary_line());
    let report = if args.history {
        let (Some(server), Some(scenario)) = (args.server.as_deref(), args.scenario) else {
            anyhow::bail!("--history needs --server and --scenario");
        };
        let report = history(&loaded.results, server, scenario, args.metric);
        anyhow::ensure!(
            !report.is_empty(),
            "no ok results of {server} under {scenario} in {}",
            dir.display()
        );
        report
    } else {
        let selection = select(
            &loaded.results,
            &Choice {
                mode: args.mode,
                run: args.run.clone(),
            },
        );
        let mut report = Report::from_selected(&selection.results);
        report.notes.extend(selection.left_out);
        report
    };
    print!("{}", args.format.render(&report));
    Ok(0)
}
