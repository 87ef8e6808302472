//! `wscbench report`: the comparison tables from stored results alone.

use std::path::Path;

use anyhow::{Context, Result};
use wscbench_report::{Report, load_results};

use crate::cli::ReportArgs;

pub fn run(root: &Path, args: ReportArgs) -> Result<i32> {
    let dir = if args.dir.is_relative() && !args.dir.exists() {
        root.join(&args.dir)
    } else {
        args.dir.clone()
    };
    let loaded = load_results(&dir, args.run.as_deref())
        .with_context(|| format!("reading results from {}", dir.display()))?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    eprintln!("{}", loaded.summary_line());
    print!(
        "{}",
        args.format.render(&Report::from_results(&loaded.results))
    );
    Ok(0)
}
